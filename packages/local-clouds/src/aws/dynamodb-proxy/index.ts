export { startDynamoDbProxy, type DynamoDbProxy, type DynamoDbProxyOptions } from './server.js';
