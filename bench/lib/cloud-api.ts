/**
 * The benchmarks' client for the stand-in's HTTP API (`startCloudLocal`): JSON in and out, the
 * bearer token in place of SigV4 signing, an error naming the call when it is not 2xx.
 */
export function cloudApi(base: string, token: string) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  return async (path: string, init: RequestInit = {}): Promise<Record<string, unknown>> => {
    const response = await fetch(`${base}${path}`, { ...init, headers });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok)
      throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  };
}
