import { Controller } from '@nestjs/common';
import { buildOpenApiDocument, declaredEndpoints, Endpoint } from '@switchyard/api';
import { z } from 'zod';
import { API_GUIDE } from './api-guide';

@Controller()
export class OpenApiController {
  private document: unknown;

  @Endpoint({
    operationId: 'get_openapi_document',
    method: 'GET',
    path: '/openapi.json',
    summary: 'This OpenAPI 3.1.0 document, generated from the endpoint declarations',
    tags: ['Operations'],
    auth: 'public',
    status: 200,
    response: { description: 'The OpenAPI document', schema: z.record(z.string(), z.unknown()) },
  })
  get() {
    this.document ??= buildOpenApiDocument(declaredEndpoints(), {
      title: 'Switchyard payment orchestration API',
      description: API_GUIDE,
    });
    return this.document;
  }
}
