import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ENDPOINT_METADATA, validate, type EndpointSpec } from '@switchyard/api';
import type { FastifyRequest } from 'fastify';

export interface EndpointInput<Query = unknown, Body = unknown, Params = unknown> {
  readonly params: Params;
  readonly query: Query;
  readonly body: Body;
}

/** The request's path parameters, query and body, validated against the endpoint's declared schemas (422). */
export const Input = createParamDecorator((_data: unknown, context: ExecutionContext): EndpointInput => {
  const spec = Reflect.getMetadata(ENDPOINT_METADATA, context.getHandler()) as EndpointSpec;
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return {
    params: spec.params ? validate(spec.params, request.params, 'path') : request.params,
    query: spec.query ? validate(spec.query, request.query, 'query') : request.query,
    body: spec.body ? validate(spec.body, request.body ?? {}, 'body') : undefined,
  };
});
