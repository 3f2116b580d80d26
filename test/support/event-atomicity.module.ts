import { Body, Controller, HttpCode, Injectable, Module, Param, Post, UseInterceptors } from '@nestjs/common';
import { Public } from '../../src/common/access-decorators';
import { validationError } from '../../src/common/errors';
import { EventRecorder } from '../../src/events/event-recorder';
import { EventRecordingInterceptor } from '../../src/events/event-recording.interceptor';
import { toRoleResponse } from '../../src/roles/role.mapper';
import { RoleRepository } from '../../src/roles/role.repository';
import { CallerPermissionsModule } from '../../src/roles/caller-permissions.module';
import { EventsModule } from '../../src/events/events.module';

export const ATOMICITY_PATH = (membershipId: string): string => `/test-only/memberships/${membershipId}/atomicity`;

export interface AtomicityBody {
  id: string;
  /** The role's slug; the id when omitted. */
  slug?: string;
  /** Fail after the service made its change and recorded its event. */
  failInHandler?: boolean;
}

/** A service the way features write them: a change through a repository and its event in EventRecorder.transaction (which joins the interceptor's), no transaction handle. */
@Injectable()
class AtomicityService {
  constructor(
    private readonly roles: RoleRepository,
    private readonly recorder: EventRecorder,
  ) {}

  createRole(membershipId: string, id: string, slug: string): Promise<object> {
    return this.recorder.transaction(async (record) => {
      const row = await this.roles.insert(membershipId, { id, name: id, slug, createdBy: 'test' });
      const role = toRoleResponse(row);
      record({ membershipId, eventType: 'RoleCreated', utilizerId: 'test', document: role });
      return role;
    });
  }
}

/** Test-only route (booted only by test/e2e/event-recording.e2e-spec.ts, never by the service). */
@Controller('test-only/memberships/:membershipId/atomicity')
@UseInterceptors(EventRecordingInterceptor)
class AtomicityController {
  constructor(private readonly service: AtomicityService) {}

  @Post()
  @Public()
  @HttpCode(201)
  async create(@Param('membershipId') membershipId: string, @Body() body: AtomicityBody): Promise<object> {
    const role = await this.service.createRole(membershipId, body.id, body.slug ?? body.id);
    if (body.failInHandler) throw validationError('failInHandler', 'the handler fails after its service recorded an event');
    return role;
  }
}

@Module({
  // The role store and the recorder, as the roles feature gets them.
  imports: [CallerPermissionsModule, EventsModule],
  controllers: [AtomicityController],
  providers: [AtomicityService],
})
export class EventAtomicityTestModule {}
