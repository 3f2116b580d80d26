// The application's document lives in common/ beside the user's, because the Caller (common/caller.ts) carries it for /me.
export { toApplicationResponse, type ApplicationResponse } from '../common/application-document';
