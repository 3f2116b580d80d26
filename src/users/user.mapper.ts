// The user document lives in common/ so that sign-in/ (its lock event), which users/ calls, builds it without importing users/.
export { toUserResponse, type UserResponse } from '../common/user-document';
