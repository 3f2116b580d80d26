import { ApiProperty } from '@nestjs/swagger';
import { SysSchema } from '../common/api-docs';

/*
 * Response shapes that no feature documents yet, for the OpenAPI document only (the mappers
 * build the real objects field by field). The document keys schemas by class name, so names
 * must be unique across src/.
 */

/** A user as toUserResponse builds it (GET /me with a Bearer token; the users routes). */
export class UserResource {
  @ApiProperty() _id!: string;
  @ApiProperty() username!: string;
  @ApiProperty({ type: String, nullable: true }) firstname!: string | null;
  @ApiProperty({ type: String, nullable: true }) lastname!: string | null;
  @ApiProperty({ format: 'email' }) email_address!: string;
  @ApiProperty({ type: String, nullable: true, description: 'Role slug' }) role!: string | null;
  @ApiProperty({ type: String, nullable: true }) user_type!: string | null;
  @ApiProperty({ type: [String], description: 'Own permission expressions' }) permissions!: string[];
  @ApiProperty({ type: [String], description: 'Own forbidden expressions' }) forbidden!: string[];
  @ApiProperty() is_active!: boolean;
  @ApiProperty({ type: String, nullable: true }) source_provider!: string | null;
  @ApiProperty() membership_id!: string;
  @ApiProperty({ type: () => SysSchema }) sys!: SysSchema;
}
