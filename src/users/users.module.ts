import { Module } from '@nestjs/common';
import { EventsModule } from '../events/events.module';
import { MembershipStoreModule } from '../memberships/membership-store.module';
import { CallerPermissionsModule } from '../roles/caller-permissions.module';
import { SessionsModule } from '../sessions/sessions.module';
import { UserTypesModule } from '../user-types/user-types.module';
import { SignInModule } from '../sign-in/sign-in.module';
import { PasswordCheckController } from './password-check.controller';
import { PasswordChange } from './password-change';
import { PasswordHasherModule } from './password-hasher.module';
import { UserPasswordService } from './user-password.service';
import { UserRepository } from './user.repository';
import { UsersController } from './users.controller';
import { UsersService } from './users.service';

@Module({
  imports: [UserTypesModule, MembershipStoreModule, CallerPermissionsModule, EventsModule, PasswordHasherModule, SessionsModule, SignInModule],
  controllers: [UsersController, PasswordCheckController],
  providers: [UserRepository, PasswordChange, UsersService, UserPasswordService],
  exports: [UserRepository, PasswordChange, UsersService],
})
export class UsersModule {}
