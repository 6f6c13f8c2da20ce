/** Whether the page is cross-origin isolated, and what made it so. */
export interface IsolationStatus {
  isolated: boolean;
  /** 'headers' when the server sent COOP/COEP, 'service worker' when coi-serviceworker did. */
  via: 'headers' | 'service worker' | null;
}

export function isolationStatus(): IsolationStatus {
  if (!globalThis.crossOriginIsolated) return { isolated: false, via: null };
  return { isolated: true, via: navigator.serviceWorker?.controller ? 'service worker' : 'headers' };
}
