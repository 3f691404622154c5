import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type middy from '@middy/core';
import type { LoggedContext } from './request-logger';

export interface RequestInput {
  query: unknown;
  params: unknown;
  body: unknown;
}

/** What the chain adds to Lambda's context for the handler and later middlewares. */
export interface HttpContext extends LoggedContext {
  input: RequestInput;
  /** Set by the authentication middleware on protected routes. */
  caller?: import('@hatchery/core/accounts/identity').Identity;
}

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;
export type HttpMiddleware = middy.MiddlewareObj<HttpEvent, HttpResult, Error, HttpContext>;
