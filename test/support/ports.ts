/** Ports for servers a test starts later, or where nothing listens: see the client package's helper, their one home. */
export { closedPort, closedPorts } from '../../packages/client/src/testing/ports';
