/** Downloads `blob` as a file named `fileName` (browser only). */
function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  // Revoked a moment later: some browsers start reading the URL after click() returns.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Downloads `data` as a JSON file named `fileName` (browser only). */
export function downloadJson(data: unknown, fileName: string): void {
  downloadBlob(new Blob([JSON.stringify(data)], { type: 'application/json' }), fileName);
}

/** Downloads `bytes` as a file named `fileName` of MIME type `type` (browser only). */
export function downloadBytes(bytes: Uint8Array, fileName: string, type: string): void {
  downloadBlob(new Blob([bytes as BlobPart], { type }), fileName);
}
