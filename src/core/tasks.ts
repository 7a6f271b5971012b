/** `_active_tasks`: long-running work (compaction, indexing, replication) reporting its progress. */

export type TaskFields = Record<string, string | number | boolean | null>;

export interface TaskHandle {
  update(fields: TaskFields): void;
  done(): void;
}

interface Task {
  pid: string;
  type: string;
  started_on: number;
  updated_on: number;
  fields: TaskFields;
}

export class TaskRegistry {
  private readonly tasks = new Map<string, Task>();
  private nextPid = 1;

  start(type: string, fields: TaskFields): TaskHandle {
    const now = Math.floor(Date.now() / 1000);
    const task: Task = { pid: `<0.${this.nextPid++}.0>`, type, started_on: now, updated_on: now, fields: { progress: 0, ...fields } };
    this.tasks.set(task.pid, task);
    return {
      update: (more) => {
        Object.assign(task.fields, more);
        task.updated_on = Math.floor(Date.now() / 1000);
      },
      done: () => void this.tasks.delete(task.pid),
    };
  }

  /**
   * Every task as couch_task_status:all lists it: `pid` first, then the task's properties in the
   * order of their names (add_task and update keep them sorted with lists:ukeysort).
   */
  list(): Record<string, unknown>[] {
    return [...this.tasks.values()].map((t) => {
      const props: Record<string, unknown> = { ...t.fields, type: t.type, started_on: t.started_on, updated_on: t.updated_on };
      const task: Record<string, unknown> = { pid: t.pid };
      for (const key of Object.keys(props).sort()) task[key] = props[key];
      return task;
    });
  }
}
