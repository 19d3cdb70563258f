/**
 * The deployment files — docker-compose.yml and deploy/k8s/*.yaml — against the code and the docs: probes and
 * resources on every workload, only settings that libs/config reads, a start order that waits for health, each
 * service listening where its probe looks, and the Kafka topics of deploy/kafka/topics.md created by both topic jobs
 * with the partitions and retention documented in docs/operations.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import { settingsSchema } from '@switchyard/config';
import { rpcServices as rpcCallers, rpcServiceNames } from '@switchyard/rpc';
import { parse, parseAllDocuments } from 'yaml';

type Json = Record<string, any>;

const root = path.resolve(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

const compose = parse(read('docker-compose.yml'), { merge: true }) as Json;
const composeServices = Object.entries(compose.services as Record<string, Json>);

const k8sFiles = fs.readdirSync(path.join(root, 'deploy/k8s')).filter((file) => file.endsWith('.yaml'));
const k8sDocs: Json[] = k8sFiles.flatMap((file) =>
  parseAllDocuments(read(`deploy/k8s/${file}`)).map((doc) => {
    if (doc.errors.length > 0)
      throw new Error(`deploy/k8s/${file}: ${doc.errors.map((error) => error.message).join('; ')}`);
    return doc.toJS() as Json;
  }),
);
const resources = k8sDocs.filter((doc) => doc.kind !== 'Kustomization');
const ofKind = (kind: string) => resources.filter((doc) => doc.kind === kind);
const podSpec = (workload: Json): Json => workload.spec.template.spec;
const containersOf = (kinds: string[]) =>
  resources
    .filter((doc) => kinds.includes(doc.kind))
    .flatMap((workload) => (podSpec(workload).containers as Json[]).map((container) => ({ workload, container })));

const settingNames = new Set(Object.keys(settingsSchema.shape));
/** The simulator is not configured through libs/config: it reads process.env itself. */
const simulatorMain = read('libs/connectors/src/simulator/simulator-main.ts');
const simulatorNames = new Set([...simulatorMain.matchAll(/process\.env\.([A-Z0-9_]+)/g)].map((match) => match[1]!));

const isSwitchyardImage = (container: Json) => String(container.image).split(':')[0] === 'switchyard';
const isSimulator = (command: unknown) => JSON.stringify(command ?? []).includes('simulator');

const rpcServices = { identity: 4001, transactions: 4002, 'gift-cards': 4004, webhooks: 4003, vault: 4005 } as const;
const rpcUrlSetting = (service: string) => `${service.toUpperCase().replaceAll('-', '_')}_RPC_URL`;

/** `name:partitions:retention.ms` entries, as both topic jobs take them in TOPICS. */
const topicSpecs = (value: unknown) =>
  Object.fromEntries(
    String(value)
      .trim()
      .split(/\s+/)
      .map((spec) => {
        const [name, partitions, retentionMs] = spec.split(':');
        return [name!, { partitions: Number(partitions), retentionMs: Number(retentionMs) }];
      }),
  );

describe('docker-compose.yml', () => {
  const built = composeServices.filter(([, service]) => service.build !== undefined);

  it('builds every service from the Dockerfile and gives each a health check', () => {
    expect(built.map(([name]) => name).sort()).toEqual([
      'gateway',
      'gift-cards',
      'identity',
      'simulator',
      'transactions',
      'vault',
      'webhooks',
    ]);
    for (const [name, service] of composeServices) {
      if (name === 'kafka-topics') continue; // one-shot: its dependents wait for it to exit 0
      expect(service.healthcheck?.test, `${name} has no healthcheck`).toBeDefined();
    }
  });

  it('sets only settings that libs/config reads (the simulator: what simulator-main.ts reads)', () => {
    for (const [name, service] of built) {
      const allowed = isSimulator(service.command) ? simulatorNames : settingNames;
      for (const variable of Object.keys(service.environment ?? {})) {
        expect(allowed.has(variable), `${name}: ${variable} is not a setting it reads`).toBe(true);
      }
    }
  });

  it('starts each service only after what it depends on is healthy (or, for the topic job, has completed)', () => {
    for (const [name, service] of composeServices) {
      for (const [dependency, condition] of Object.entries((service.depends_on ?? {}) as Record<string, Json>)) {
        expect(['service_healthy', 'service_completed_successfully'], `${name} → ${dependency}`).toContain(
          condition.condition,
        );
        const target = compose.services[dependency] as Json | undefined;
        expect(target, `${name} depends on unknown ${dependency}`).toBeDefined();
        if (condition.condition === 'service_healthy')
          expect(target!.healthcheck, `${dependency} has no healthcheck`).toBeDefined();
      }
    }
    expect(Object.keys(compose.services.gateway.depends_on)).toEqual(
      expect.arrayContaining(['identity', 'transactions', 'vault', 'gift-cards', 'webhooks', 'redis']),
    );
    // The transactions process waits for the vault's key hand-over; the gift cards process for transactions'.
    expect(compose.services.transactions.depends_on.vault).toEqual({ condition: 'service_healthy' });
    expect(compose.services['gift-cards'].depends_on.transactions).toEqual({ condition: 'service_healthy' });
    for (const service of Object.keys(rpcServices))
      expect(Object.keys(compose.services[service].depends_on)).toContain('kafka-topics');
  });

  it('has each RPC service listen on every interface of its container, on the port its health check pings', () => {
    for (const [service, port] of Object.entries(rpcServices)) {
      const definition = compose.services[service] as Json;
      expect(definition.environment[rpcUrlSetting(service)]).toBe(`tcp://0.0.0.0:${port}`);
      expect(definition.healthcheck.test).toEqual(['CMD', 'node', 'scripts/rpc-ping.cjs', service]);
    }
  });

  it('keeps the vault’s data on a volume of its own, and its key with it alone', () => {
    expect(compose.services.vault.volumes).toEqual(['vault-data:/data']);
    for (const [name, service] of composeServices) {
      if (name === 'vault') continue;
      expect(service.volumes ?? [], name).not.toContain('vault-data:/data');
      expect(Object.keys(service.environment ?? {}), name).not.toContain('VAULT_KEY');
    }
  });

  it('gives every service on EventStoreDB a node of its own (a relay publishes its whole store) and a volume to every store', () => {
    const urls = Object.keys(rpcServices).map(
      (service) => compose.services[service].environment.EVENTSTORE_URL as string | undefined,
    );
    const defined = urls.filter((url): url is string => url !== undefined);
    expect(new Set(defined).size).toBe(defined.length);
    for (const [name, service] of composeServices) {
      if (
        String(service.image ?? '').startsWith('eventstore/') ||
        ['kafka', ...Object.keys(rpcServices)].includes(name)
      ) {
        const named = ((service.volumes ?? []) as string[]).map((volume) => volume.split(':')[0]);
        expect(named.length, `${name} keeps its data in no volume`).toBeGreaterThan(0);
        for (const volume of named) expect(Object.keys(compose.volumes)).toContain(volume);
      }
    }
  });

  it('gives each service the CA certificate and its own certificate and key as secrets, never the CA key or another’s', () => {
    for (const service of rpcServiceNames) {
      const definition = compose.services[service] as Json;
      const mounted = Object.fromEntries(
        (definition.secrets as Json[]).map((secret) => [secret.target, compose.secrets[secret.source].file]),
      );
      expect(mounted).toEqual({
        'rpc-ca.crt': './rpc-credentials/ca.crt',
        'rpc-service.crt': `./rpc-credentials/${service}.crt`,
        'rpc-service.key': `./rpc-credentials/${service}.key`,
      });
      expect(definition.environment).toMatchObject({
        RPC_TLS_CA_FILE: '/run/secrets/rpc-ca.crt',
        RPC_TLS_CERT_FILE: '/run/secrets/rpc-service.crt',
        RPC_TLS_KEY_FILE: '/run/secrets/rpc-service.key',
      });
    }
    const files = Object.values(compose.secrets as Record<string, Json>).map((secret) => secret.file as string);
    expect(files).not.toContain('./rpc-credentials/ca.key');
  });
});

describe('deploy/k8s', () => {
  it('lists every manifest in its kustomization', () => {
    const kustomization = k8sDocs.find((doc) => doc.kind === 'Kustomization');
    expect([...kustomization!.resources].sort()).toEqual(
      k8sFiles.filter((file) => file !== 'kustomization.yaml').sort(),
    );
  });

  it('gives every Deployment container readiness and liveness probes, resource requests and limits, and a locked-down context', () => {
    const deployments = containersOf(['Deployment']);
    expect(deployments.map(({ workload }) => workload.metadata.name).sort()).toEqual([
      'gateway',
      'gift-cards',
      'identity',
      'simulator',
      'transactions',
      'vault',
      'webhooks',
    ]);
    for (const { workload, container } of deployments) {
      const name = workload.metadata.name as string;
      expect(container.readinessProbe, `${name}: readinessProbe`).toBeDefined();
      expect(container.livenessProbe, `${name}: livenessProbe`).toBeDefined();
      expect(podSpec(workload).securityContext.runAsNonRoot, `${name}: runAsNonRoot`).toBe(true);
      expect(container.securityContext.readOnlyRootFilesystem, `${name}: readOnlyRootFilesystem`).toBe(true);
      expect(container.securityContext.allowPrivilegeEscalation, `${name}: allowPrivilegeEscalation`).toBe(false);
    }
    for (const { workload, container } of containersOf(['Deployment', 'Job'])) {
      for (const bound of ['requests', 'limits']) {
        expect(container.resources?.[bound], `${workload.metadata.name}: resources.${bound}`).toMatchObject({
          cpu: expect.anything(),
          memory: expect.anything(),
        });
      }
    }
    const gateway = containersOf(['Deployment']).find(
      ({ workload }) => workload.metadata.name === 'gateway',
    )!.container;
    expect(gateway.readinessProbe.httpGet.path).toBe('/readyz');
    expect(gateway.livenessProbe.httpGet.path).toBe('/healthz');
  });

  it('sets only settings that libs/config reads, directly or through a ConfigMap (the simulator: what simulator-main.ts reads)', () => {
    const configMaps = new Map(ofKind('ConfigMap').map((map) => [map.metadata.name as string, map.data ?? {}]));
    for (const { workload, container } of containersOf(['Deployment'])) {
      expect(isSwitchyardImage(container), `${workload.metadata.name} runs ${container.image}`).toBe(true);
      const allowed = isSimulator(container.command) ? simulatorNames : settingNames;
      const fromMaps = ((container.envFrom ?? []) as Json[]).flatMap((source) => {
        const data = configMaps.get(source.configMapRef?.name);
        expect(data, `${workload.metadata.name}: envFrom ${JSON.stringify(source)}`).toBeDefined();
        return Object.keys(data ?? {});
      });
      for (const variable of [...((container.env ?? []) as Json[]).map((entry) => entry.name as string), ...fromMaps]) {
        expect(allowed.has(variable), `${workload.metadata.name}: ${variable} is not a setting it reads`).toBe(true);
      }
      for (const entry of (container.env ?? []) as Json[]) {
        const ref = entry.valueFrom?.configMapKeyRef;
        if (ref && !ref.optional)
          expect(configMaps.get(ref.name)?.[ref.key], `${workload.metadata.name}: ${entry.name}`).toBeDefined();
      }
    }
  });

  it('keeps the SQLite data of identity, transactions, the vault, gift cards and webhooks on PersistentVolumeClaims, one writer each', () => {
    const claims = new Set(ofKind('PersistentVolumeClaim').map((claim) => claim.metadata.name as string));
    for (const [service, port] of Object.entries(rpcServices)) {
      const workload = ofKind('Deployment').find((deployment) => deployment.metadata.name === service)!;
      const container = podSpec(workload).containers[0] as Json;
      const env = Object.fromEntries(((container.env ?? []) as Json[]).map((entry) => [entry.name, entry]));
      const dataDir = env.DATA_DIR?.value as string;
      const mount = (container.volumeMounts as Json[]).find((volumeMount) => volumeMount.mountPath === dataDir);
      const volume = (podSpec(workload).volumes as Json[]).find((candidate) => candidate.name === mount?.name);
      expect(
        volume?.persistentVolumeClaim?.claimName,
        `${service}: ${dataDir} is not on a PersistentVolumeClaim`,
      ).toBeDefined();
      expect(claims).toContain(volume!.persistentVolumeClaim.claimName);
      expect(workload.spec.replicas).toBe(1);
      expect(workload.spec.strategy.type).toBe('Recreate');
      // Listens on every interface of the pod, where its probes ping it.
      expect(env[rpcUrlSetting(service)]?.value).toBe(`tcp://0.0.0.0:${port}`);
      for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
        expect(container[probe].exec.command, `${service}: ${probe}`).toEqual([
          'node',
          'scripts/rpc-ping.cjs',
          service,
        ]);
      }
    }
    const containerOf = (name: string) =>
      podSpec(ofKind('Deployment').find((deployment) => deployment.metadata.name === name)!).containers[0] as Json;
    // The vault key is the vault's alone, and the vault's data on a claim of its own.
    const vault = podSpec(ofKind('Deployment').find((deployment) => deployment.metadata.name === 'vault')!);
    const vaultKey = ((vault.containers[0] as Json).env as Json[]).find((entry) => entry.name === 'VAULT_KEY');
    expect(vaultKey?.valueFrom?.secretKeyRef).toMatchObject({ name: 'switchyard-vault', key: 'VAULT_KEY' });
    expect((vault.volumes as Json[]).find((volume) => volume.name === 'data')?.persistentVolumeClaim?.claimName).toBe(
      'vault-data',
    );
    for (const other of ['transactions', 'gift-cards', 'identity', 'webhooks', 'gateway']) {
      const names = ((containerOf(other).env ?? []) as Json[]).map((entry) => entry.name);
      expect(names, `${other} reads a vault key`).not.toContain('VAULT_KEY');
      expect(names, `${other} reads a vault key`).not.toContain('VAULT_RETIRED_KEYS');
    }
  });

  it('mounts each service’s own RPC credentials Secret (ca.crt, its certificate, its key) where RPC_CREDENTIALS_DIR points', () => {
    for (const service of rpcServiceNames) {
      const workload = ofKind('Deployment').find((deployment) => deployment.metadata.name === service)!;
      const container = podSpec(workload).containers[0] as Json;
      const dir = ((container.env ?? []) as Json[]).find((entry) => entry.name === 'RPC_CREDENTIALS_DIR')
        ?.value as string;
      const mount = (container.volumeMounts as Json[]).find((volumeMount) => volumeMount.mountPath === dir);
      expect(mount, `${service}: nothing mounted at RPC_CREDENTIALS_DIR`).toBeDefined();
      const volume = (podSpec(workload).volumes as Json[]).find((candidate) => candidate.name === mount!.name);
      expect(volume?.secret?.secretName).toBe(`switchyard-rpc-${service}`);
      // The files are group-readable for the pod's fsGroup (the containers run as user 1000, the files belong to root).
      expect(podSpec(workload).securityContext.fsGroup, service).toBe(1000);
    }
    const howTo = read('deploy/k8s/kustomization.yaml');
    expect(howTo).toContain('kubectl create secret generic switchyard-rpc-$s --from-file=rpc-credentials/ca.crt');
    expect(howTo).not.toContain('--from-file=rpc-credentials/ca.key');
  });

  it('lets only a service’s callers (libs/rpc rpcServices) reach its RPC port, and only Prometheus its metrics port', () => {
    const policies = ofKind('NetworkPolicy');
    for (const service of rpcServiceNames) {
      const callers = Object.keys(rpcCallers[service].callers)
        .filter((caller) => caller !== service)
        .sort();
      const policy = policies.find((candidate) => candidate.spec.podSelector.matchLabels?.app === service);
      if (callers.length === 0) {
        // The gateway serves no RPC: its API port is open, its metrics port is Prometheus's alone.
        const rules = (policy?.spec.ingress ?? []) as Json[];
        expect(rules.flatMap((rule) => (rule.ports as Json[]).map((port) => port.port)).sort()).toEqual([
          'http',
          'metrics',
        ]);
        const metrics = rules.find((rule) => rule.ports[0].port === 'metrics')!;
        expect(metrics.from[0].podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'prometheus' });
        continue;
      }
      expect(policy, `${service}: no NetworkPolicy`).toBeDefined();
      expect(policy!.spec.policyTypes).toContain('Ingress');
      const rules = policy!.spec.ingress as Json[];
      const onPort = (port: string) =>
        rules.filter((rule) => (rule.ports as Json[]).some((entry) => entry.port === port));
      // Every rule names its port: none opens the whole pod.
      for (const rule of rules) expect(rule.ports?.length, `${service}: a rule without ports`).toBeGreaterThan(0);
      const rpc = onPort('rpc');
      expect(rpc).toHaveLength(1);
      expect(rpc[0]!.from).toEqual([
        { podSelector: { matchExpressions: [{ key: 'app', operator: 'In', values: expect.any(Array) }] } },
      ]);
      expect([...rpc[0]!.from[0].podSelector.matchExpressions[0].values].sort()).toEqual(callers);
      const metrics = onPort('metrics');
      expect(metrics).toHaveLength(1);
      expect(metrics[0]!.from).toHaveLength(1);
      expect(metrics[0]!.from[0].podSelector.matchLabels).toEqual({ 'app.kubernetes.io/name': 'prometheus' });
      expect(metrics[0]!.from[0].namespaceSelector.matchLabels).toBeDefined();
      // The ports the rules name are the container's.
      const workload = ofKind('Deployment').find((deployment) => deployment.metadata.name === service)!;
      const portNames = ((podSpec(workload).containers[0] as Json).ports as Json[]).map((port) => port.name);
      expect(portNames).toEqual(expect.arrayContaining(['rpc', 'metrics']));
    }
  });
});

describe('docs/operations.md', () => {
  it('has a configuration row for every setting of libs/config, and none for a setting it does not have', () => {
    const configuration = read('docs/operations.md').split('\n## Running')[0]!.split('\n## Configuration')[1]!;
    const rows = [...configuration.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((match) => match[1]!);
    expect(new Set(rows).size).toBe(rows.length);
    expect([...rows].sort()).toEqual([...settingNames].sort());
  });
});

describe('Kafka topics', () => {
  const topics = [...read('deploy/kafka/topics.md').matchAll(/^\| `([a-z0-9-]+\.events)` \|/gm)].map(
    (match) => match[1]!,
  );
  const operations = read('docs/operations.md');
  const documented = Object.fromEntries(
    [...operations.matchAll(/^\| `([a-z0-9-]+\.events)` \| (\d+) \| `(\d+)`/gm)].map((match) => [
      match[1]!,
      { partitions: Number(match[2]), retentionMs: Number(match[3]) },
    ]),
  );

  it('documents the partitions and retention of every topic of deploy/kafka/topics.md in docs/operations.md', () => {
    expect(topics.sort()).toEqual([
      'gift-cards.events',
      'identity.events',
      'transactions.events',
      'vault.events',
      'webhooks.events',
    ]);
    expect(Object.keys(documented).sort()).toEqual(topics);
  });

  it('creates every topic with its documented partitions and retention, in docker-compose.yml and in the Kubernetes Job', () => {
    const composeJob = compose.services['kafka-topics'] as Json;
    expect(String(composeJob.image)).toMatch(/^apache\/kafka:/);
    expect(topicSpecs(composeJob.environment.TOPICS)).toEqual(documented);

    const [job] = ofKind('Job');
    const container = podSpec(job!).containers[0] as Json;
    const env = Object.fromEntries(((container.env ?? []) as Json[]).map((entry) => [entry.name, entry.value]));
    expect(topicSpecs(env.TOPICS)).toEqual(documented);
    // One script for both, compose escaping `$` as `$$`.
    expect(composeJob.command[0].replaceAll('$$', '$')).toBe(container.args[0]);
    for (const config of [composeJob.environment.TOPIC_CONFIG, env.TOPIC_CONFIG])
      expect(config).toContain('cleanup.policy=delete');
  });
});
