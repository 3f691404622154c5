import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebSocket } from 'ws';
import { writeThrottledManagement, type AccountQuota } from './quota';
import type { LocalEndpoint } from './server';
import type { LiveConnection } from './websocket';
import { webSocketApiQuotas } from '@hatchery/platform/aws/websocket-api';

/** Where the management API is served (the SDK's path; an AWS endpoint adds the stage in front). */
export const managementPath = '/@connections';

/** An error as the management API answers it: the SDK reads the kind from `x-amzn-errortype`. */
function awsError(response: ServerResponse, status: number, type: string, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
  response.end(JSON.stringify({ message }));
}

/** The request's body, or undefined past `maxBytes`; plain stream events, which cost less per request than `for await`. */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) chunks.push(chunk);
    });
    request.once('end', () => resolve(size > maxBytes ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/**
 * The WebSocket API's management API on the local gateway: POST sends to a
 * connection, DELETE closes it, GET describes it, and any id that is not an
 * open connection is 410 GoneException, as API Gateway answers: the service's
 * clients (the AWS SDK's, packages/platform/src/aws) work against it as against AWS.
 */
export function managementApi(connections: ReadonlyMap<string, LiveConnection>, quota?: AccountQuota): LocalEndpoint {
  return async (request, response, url) => {
    // A callback request spends the account's throttle as any other request does.
    if (quota && !quota.take('management')) {
      request.resume();
      writeThrottledManagement(response);
      return;
    }
    let id: string;
    try {
      id = decodeURIComponent(url.pathname.slice(managementPath.length + 1));
    } catch {
      id = '';
    }
    const connection = connections.get(id);
    if (!connection || connection.socket.readyState !== WebSocket.OPEN) {
      // The body must be drained for the client's keep-alive socket to be reused.
      request.resume();
      awsError(response, 410, 'GoneException', `Connection ${id} is gone.`);
      return;
    }
    switch (request.method) {
      case 'POST': {
        const data = await readBody(request, webSocketApiQuotas.managementPayloadBytes);
        if (!data) {
          awsError(response, 413, 'PayloadTooLargeException', `Data exceeds ${webSocketApiQuotas.managementPayloadBytes} bytes.`);
          return;
        }
        // Text frames for text, so browsers' SignalR JSON protocol receives strings (the bytes as they came: no decoding and re-encoding).
        connection.socket.send(data, { binary: !isUtf8(data) }, (error) => {
          if (error) awsError(response, 410, 'GoneException', `Connection ${id} is gone.`);
          else {
            response.writeHead(200, { 'content-type': 'application/json' });
            response.end();
          }
        });
        return;
      }
      case 'DELETE':
        request.resume();
        connection.socket.close(1000, '');
        response.writeHead(204);
        response.end();
        return;
      case 'GET':
        request.resume();
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            connectedAt: new Date(connection.connectedAt).toISOString(),
            identity: { sourceIp: connection.sourceIp, userAgent: connection.userAgent },
            lastActiveAt: new Date(connection.lastActiveAt).toISOString(),
          }),
        );
        return;
      default:
        request.resume();
        awsError(response, 405, 'MethodNotAllowedException', `${request.method} is not a management API method.`);
    }
  };
}
