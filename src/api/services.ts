import type { Config } from '../config/config.js';
import type { Logger } from '../log/logger.js';
import type { DatabaseRegistry } from '../core/registry.js';
import type { UuidGenerator } from '../core/uuids.js';
import type { TaskRegistry } from '../core/tasks.js';
import type { ViewService } from '../views/service.js';
import type { ReplicatorManager } from '../replicator/manager.js';

/** The engines a handler may use; built once by the server and passed to every handler. */
export interface Services {
  config: Config;
  log: Logger;
  dbs: DatabaseRegistry;
  uuids: UuidGenerator;
  tasks: TaskRegistry;
  views: ViewService;
  replicator: ReplicatorManager;
  /** This server's persistent identity (GET / `uuid`). */
  serverUuid: string;
  /** Restarts the server in place: reloads config, reopens storage, keeps the process. */
  restart(): void;
}
