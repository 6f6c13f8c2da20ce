import { newQuickJSWASMModuleFromVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core';
import RELEASE_SYNC from '@jitl/quickjs-wasmfile-release-sync';
import { QuickJSSandbox } from './quickjs';

/** A QuickJS sandbox for node (unit tests, tools): the wasm is read from the package. */
export async function createNodeQuickJS(): Promise<QuickJSSandbox> {
  return new QuickJSSandbox(await newQuickJSWASMModuleFromVariant(RELEASE_SYNC));
}

/** The QuickJS module itself, for node (sessions of custom environments in unit tests). */
export function nodeQuickJSModule(): Promise<QuickJSWASMModule> {
  return newQuickJSWASMModuleFromVariant(RELEASE_SYNC);
}
