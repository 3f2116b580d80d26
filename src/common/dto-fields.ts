import { applyDecorators, type Type as ClassType } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions, IntersectionType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsBoolean, IsInt, IsObject, IsOptional, IsString, Length, Max, MaxLength, Min, ValidateIf, ValidateNested } from 'class-validator';
import { IsSlug } from './patterns';

/*
 * Body fields that many DTOs declare alike. Each decorator is the OpenAPI description and the
 * validation of one kind of field, so that its rule (a name is 1..128 characters, a description is
 * optional and nullable) has one home; examples and descriptions stay with each DTO (`docs`).
 */

/**
 * Applies decorators as if they were written one above the other: the lowest first, as TypeScript
 * does. The order of the validators is the order of a 400's messages, so it must not change.
 */
function stacked(...decorators: PropertyDecorator[]): PropertyDecorator {
  return applyDecorators(...decorators.reverse());
}

/** A required `name`: a string of 1..128 characters. */
export const NameField = (docs: ApiPropertyOptions): PropertyDecorator => stacked(ApiProperty(docs), IsString(), Length(1, 128));

/** An optional `slug` (patterns.ts); each DTO says in `docs` where it comes from when omitted. */
export const SlugField = (docs: ApiPropertyOptions): PropertyDecorator => stacked(ApiPropertyOptional(docs), IsOptional(), IsString(), IsSlug());

/** An optional, nullable `description` of at most `maxLength` characters; `docs` may add an example. */
export const DescriptionField = (maxLength: number, docs: ApiPropertyOptions = {}): PropertyDecorator =>
  stacked(ApiPropertyOptional({ type: String, nullable: true, ...docs }), IsOptional(), IsString(), MaxLength(maxLength));

/** The same, with the limit stated in the API description too. */
export const DocumentedDescriptionField = (maxLength: number, docs: ApiPropertyOptions = {}): PropertyDecorator =>
  DescriptionField(maxLength, { maxLength, ...docs });

/** An optional, nullable reference to a role or user type of the membership by its slug (whether it exists is the service's check). */
export const SlugReferenceField = (docs: ApiPropertyOptions): PropertyDecorator =>
  stacked(ApiPropertyOptional({ nullable: true, type: String, ...docs }), IsOptional(), IsString(), Length(1, 64));

/**
 * In place of IsOptional for a field that may be left out but is not nullable: left out, it is
 * absent; sent as null, it is a value like any other and the field's own rules refuse it (400).
 * IsOptional skips null as well, and a service telling "sent" from "left out" by `!== undefined`
 * would then get a null where the DTO promises a string.
 */
export const Omittable = (): PropertyDecorator => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** An optional boolean; `docs` states its default. */
export const OptionalBooleanField = (docs: ApiPropertyOptions): PropertyDecorator => stacked(ApiPropertyOptional(docs), IsOptional(), IsBoolean());

/** An optional integer in `min..max`; `docs` states its default. */
export const OptionalIntField = (min: number, max: number, docs: ApiPropertyOptions): PropertyDecorator =>
  stacked(ApiPropertyOptional(docs), IsOptional(), IsInt(), Min(min), Max(max));

/** The same, with the limits stated in the API description too. */
export const DocumentedOptionalIntField = (min: number, max: number, docs: ApiPropertyOptions): PropertyDecorator =>
  OptionalIntField(min, max, { minimum: min, maximum: max, ...docs });

/**
 * An object validated as `dto`. IsObject comes first because ValidateNested alone lets an array
 * through (it validates the elements instead, and an empty array has none), and the service would
 * then read fields of an array.
 */
export const NestedObject = (dto: ClassType<unknown>): PropertyDecorator => stacked(IsObject(), ValidateNested(), Type(() => dto));

/** An array of objects, each validated as `dto` (an element that is itself an array is refused, as above). */
export const NestedObjects = (dto: ClassType<unknown>): PropertyDecorator =>
  stacked(IsObject({ each: true }), ValidateNested({ each: true }), Type(() => dto));

/** An optional object validated as `dto`. */
export const OptionalNestedField = (dto: ClassType<unknown>): PropertyDecorator =>
  stacked(ApiPropertyOptional({ type: dto }), IsOptional(), NestedObject(dto));

/** The fields NamedBodyDto puts first. */
export interface NamedBody {
  name: string;
  slug?: string;
  description?: string | null;
}

/** How one resource documents and limits its `name`, `slug` and `description` (NameField, SlugField, a DescriptionField). */
export interface NamedBodyDecorators {
  name: PropertyDecorator;
  slug: PropertyDecorator;
  description: PropertyDecorator;
}

/**
 * The body of a named resource: `name`, `slug` and `description`, then the resource's own fields
 * (`ownFields`). Combined through IntersectionType, which keeps the three first both in the OpenAPI
 * schema and in a 400's messages; a subclass declaring its own fields would have them validated,
 * and reported, before the inherited ones.
 */
export function NamedBodyDto<TOwn>(ownFields: ClassType<TOwn>, decorators: NamedBodyDecorators): ClassType<NamedBody & TOwn> {
  class NamedBodyFieldsDto implements NamedBody {
    @decorators.name
    name!: string;

    @decorators.slug
    slug?: string;

    @decorators.description
    description?: string | null;
  }
  // IntersectionType's own type (UnionToIntersection) is this intersection, unresolved for a generic TOwn.
  return IntersectionType(NamedBodyFieldsDto, ownFields) as ClassType<NamedBody & TOwn>;
}
