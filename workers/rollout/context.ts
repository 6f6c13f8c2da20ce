import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync';
import wasmLocation from '@jitl/quickjs-wasmfile-release-sync/wasm?url';
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import type { ModelArgs } from '../../src/lib/policy/config';
import type { Params } from '../../src/lib/policy/model';
import { EventBatcher } from '../../src/lib/pipeline/params-channel';
import type { EngineStats } from '../../src/lib/rollout/rollout-engine-types';
import { CachedSandbox } from '../../src/lib/sandbox/cache';
import { QuickJSSandbox } from '../../src/lib/sandbox/quickjs';
import { LabDbConnection, type LabDB } from '../../src/lib/storage/db';

/** What the rollout worker's features share: QuickJS and the sandbox, the policy's shape, the store, the timeline. */
export class RolloutContext {
  /** The untrained policy (`init`'s seed), an evaluation's baseline. */
  untrained: Params | undefined;
  /** The model args of the untrained policy (`init`'s); `modelArgs` follows the loaded policy's. */
  untrainedArgs: ModelArgs | undefined;
  /** The model args of the policy as it runs: `init`'s, then each loaded version's. */
  modelArgs: ModelArgs | undefined;
  /** The heartbeat's counters of a custom environment's training this worker plays for (unset: none). */
  customStats: (() => EngineStats) | undefined;
  /** Timeline events, sent to the page's sink in batches. */
  readonly events = new EventBatcher();
  /** This worker's connection (closed for a newer page in another tab; its next use then says so). */
  private readonly db = new LabDbConnection();
  private module: Promise<QuickJSWASMModule> | undefined;
  private sandbox: CachedSandbox | undefined;

  database(): Promise<LabDB> {
    return this.db.get();
  }

  quickjsModule(): Promise<QuickJSWASMModule> {
    this.module ??= newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmLocation }));
    return this.module;
  }

  /** The sandbox that runs this worker's programs, with its result cache. */
  async getSandbox(): Promise<CachedSandbox> {
    this.sandbox ??= new CachedSandbox(new QuickJSSandbox(await this.quickjsModule()));
    return this.sandbox;
  }
}
