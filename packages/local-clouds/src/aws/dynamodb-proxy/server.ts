import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { DescribeTableCommand, DynamoDBClient, ResourceNotFoundException } from '@aws-sdk/client-dynamodb';
import { serveHttp } from '../../http/serve.js';
import { verifySigV4 } from '../sigv4.js';
import { DynamoDbError, DynamoDbErrors, dynamoDbAuthFailure, errorAnswer, jsonAnswer, type DynamoDbAnswer } from './errors.js';
import { EXTRA_OPERATIONS, validTags, type ExtrasContext } from './extras.js';
import { ExtrasStore } from './state.js';

export interface DynamoDbProxyOptions {
  /** DynamoDB Local's endpoint (`startDynamoDbLocal().endpoint`). */
  target: string;
  /**
   * Access key id -> secret access key. When given, every request's Signature V4 is verified as
   * DynamoDB does (UnrecognizedClientException, InvalidSignatureException); otherwise any key passes.
   */
  credentials?: Record<string, string>;
  /** Keep tags and point-in-time recovery settings in this folder (`proxy-state.json`) across restarts (default: memory). */
  dataDir?: string;
  host?: string;
  port?: number;
}

export interface DynamoDbProxy {
  /** `http://127.0.0.1:PORT`, for the SDK's `endpoint`. */
  endpoint: string;
  stop(): Promise<void>;
}

const TARGET_PREFIX = 'DynamoDB_20120810.';

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Sends the request on to DynamoDB Local as it came, and reads its answer whole. */
function forward(target: URL, request: IncomingMessage, body: Buffer): Promise<DynamoDbAnswer> {
  return new Promise((resolve, reject) => {
    // The body was read whole: it goes on with its length, never chunked or waiting for a 100 Continue.
    const { 'transfer-encoding': _chunked, expect: _expect, ...headers } = request.headers;
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: { ...headers, 'content-length': String(body.length) } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('error', reject);
        answer.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(answer.headers)) {
            if (value !== undefined && name !== 'transfer-encoding' && name !== 'connection') headers[name] = Array.isArray(value) ? value.join(', ') : value;
          }
          const answerBody = Buffer.concat(chunks);
          headers['content-length'] = String(answerBody.length);
          resolve({ status: answer.statusCode ?? 502, headers, body: answerBody });
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

function parseInput(body: Buffer): Record<string, unknown> {
  try {
    const input: unknown = JSON.parse(body.toString('utf8') || '{}');
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) return input as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new DynamoDbError('com.amazon.coral.service#SerializationException', 'Start of structure or map found where not expected.');
}

/**
 * Starts a proxy in front of DynamoDB Local that makes it answer as DynamoDB does where it does not:
 * it checks Signature V4 (with `credentials`), and serves TagResource, UntagResource,
 * ListTagsOfResource (Tags given to CreateTable included; a deleted table's tags go with it),
 * DescribeContinuousBackups and UpdateContinuousBackups. Everything else goes to DynamoDB Local.
 */
export async function startDynamoDbProxy(options: DynamoDbProxyOptions): Promise<DynamoDbProxy> {
  const target = new URL(options.target);
  const store = new ExtrasStore(options.dataDir);
  // DynamoDB Local keeps one database for every key and region (-sharedDb): any key reads it.
  const local = new DynamoDBClient({ endpoint: options.target, region: 'us-east-1', credentials: { accessKeyId: 'k8orproxy', secretAccessKey: 'k8orproxy' }, maxAttempts: 3 });
  const context: ExtrasContext = {
    store,
    now: () => new Date(),
    describe: async (table) => {
      try {
        const described = await local.send(new DescribeTableCommand({ TableName: table }));
        return { created: described.Table?.CreationDateTime?.getTime() ?? 0 };
      } catch (error) {
        if (error instanceof ResourceNotFoundException) return undefined;
        throw error;
      }
    },
  };

  async function answer(request: IncomingMessage, body: Buffer): Promise<DynamoDbAnswer> {
    if (options.credentials) {
      const failure = dynamoDbAuthFailure(await verifySigV4({ method: request.method ?? 'POST', rawUrl: request.url ?? '/', headers: request.headers, body }, options.credentials, { uriEscapePath: true }));
      if (failure) return errorAnswer(failure);
    }
    const targetHeader = String(request.headers['x-amz-target'] ?? '');
    const operation = targetHeader.startsWith(TARGET_PREFIX) ? targetHeader.slice(TARGET_PREFIX.length) : '';
    const extra = EXTRA_OPERATIONS[operation];
    if (extra) return jsonAnswer(200, await extra(context, parseInput(body)));
    if (operation === 'CreateTable') {
      const input = parseInput(body);
      const tags = input['Tags'] === undefined ? [] : validTags(input['Tags'], 'tags');
      const created = await forward(target, request, body);
      if (created.status === 200) {
        const description = (JSON.parse(created.body.toString('utf8')) as { TableDescription?: { TableName?: string; CreationDateTime?: number } }).TableDescription;
        if (description?.TableName) store.set(description.TableName, { created: Math.round((description.CreationDateTime ?? 0) * 1000), tags });
      }
      return created;
    }
    const forwarded = await forward(target, request, body);
    if (operation === 'DeleteTable' && forwarded.status === 200) {
      const table = (JSON.parse(forwarded.body.toString('utf8')) as { TableDescription?: { TableName?: string } }).TableDescription?.TableName;
      if (table) store.delete(table);
    }
    return forwarded;
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = await readBody(request);
    let result: DynamoDbAnswer;
    try {
      result = await answer(request, body);
    } catch (error) {
      result = errorAnswer(error instanceof DynamoDbError ? error : DynamoDbErrors.internal(error instanceof Error ? error.message : String(error)));
    }
    response.writeHead(result.status, result.headers);
    response.end(result.body);
  }

  const server = await serveHttp(handle, { host: options.host, port: options.port });
  return {
    endpoint: server.endpoint,
    stop: async () => {
      await server.close();
      local.destroy();
    },
  };
}
