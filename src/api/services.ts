import type { Config } from '../config/config.js';
import type { Request } from './request.js';
import type { Reply } from './reply.js';
import type { Logger } from '../log/logger.js';
import type { DatabaseRegistry } from '../core/registry.js';
import type { UuidGenerator } from '../core/uuids.js';
import type { TaskRegistry } from '../core/tasks.js';
import type { ViewService } from '../views/service.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { DesignService } from '../design/service.js';
import type { ReplicatorManager } from '../replicator/manager.js';
import type { StatsAggregator } from '../core/stats.js';

/** The engines a handler may use; built once by the server and passed to every handler. */
export interface Services {
  config: Config;
  log: Logger;
  dbs: DatabaseRegistry;
  uuids: UuidGenerator;
  tasks: TaskRegistry;
  views: ViewService;
  /** Authentication: credentials, sessions, the users database's rules. */
  auth: Authenticator;
  /** Design-document functions other than views: validation, filters, show, list, update. */
  design: DesignService;
  replicator: ReplicatorManager;
  /** `/_stats`: counters the handlers bump (`stats.collector`) and their sampled aggregates. */
  stats: StatsAggregator;
  /** This server's persistent identity (GET / `uuid`). */
  serverUuid: string;
  /** Routes a request through the server's router and handlers again (`_rewrite`'s rewritten requests). */
  dispatch(req: Request): Promise<Reply>;
  /** Restarts the server in place: reloads config, reopens storage, keeps the process. */
  restart(): void;
}
