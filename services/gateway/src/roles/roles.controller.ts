import { Controller, Inject } from '@nestjs/common';
import { Endpoint, pageQuery, pageSchema, type Page, type PageQuery } from '@switchyard/api';
import { identityPatterns, roleSchema, type Role } from '@switchyard/contracts';
import type { RpcClient } from '@switchyard/rpc';
import { Input, type EndpointInput } from '../http/input';
import { RPC_CLIENT } from '../tokens';

@Controller()
export class RolesController {
  constructor(@Inject(RPC_CLIENT) private readonly rpc: RpcClient) {}

  @Endpoint({
    operationId: 'list_roles',
    method: 'GET',
    path: '/roles',
    summary: 'List the roles that can be assigned to users and API key pairs',
    tags: ['Roles'],
    auth: { anyOf: ['roles.read'] },
    merchantAccount: 'ignored',
    query: pageQuery({ maxLimit: 100 }),
    status: 200,
    response: { description: 'A page of roles', schema: pageSchema(roleSchema).meta({ id: 'Roles' }) },
  })
  list(@Input() input: EndpointInput<PageQuery>): Promise<Page<Role>> {
    return this.rpc.call(identityPatterns.listRoles, input.query);
  }
}
