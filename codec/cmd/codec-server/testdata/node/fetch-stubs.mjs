// A client outside Go: reads a closed run's events with @temporalio/client,
// fetches the content of every stub in them from the codec server, and
// prints one JSON line per stub. Run by TestBlobsFromNode:
//
//   node fetch-stubs.mjs TEMPORAL_ADDRESS NAMESPACE WORKFLOW_ID CODEC_URL TOKEN OTHER_WORKFLOW_ID
import { createHash } from 'node:crypto';
import { Connection, Client } from '@temporalio/client';

const [address, namespace, workflowId, codecUrl, token, otherWorkflowId] = process.argv.slice(2);

// stubs collects every {"$blob": {sha256, size, scope}} in a decoded value.
function stubs(value, out) {
  if (Array.isArray(value)) {
    value.forEach((v) => stubs(v, out));
  } else if (value && typeof value === 'object') {
    if (value.$blob) {
      out.push(value.$blob);
      return out;
    }
    Object.values(value).forEach((v) => stubs(v, out));
  }
  return out;
}

async function get(wf, sha) {
  const url = `${codecUrl}/blobs/${encodeURIComponent(namespace)}/${encodeURIComponent(wf)}/${sha}`;
  const resp = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
  return { status: resp.status, type: resp.headers.get('content-type'), body: Buffer.from(await resp.arrayBuffer()) };
}

const connection = await Connection.connect({ address });
try {
  const handle = new Client({ connection, namespace }).workflow.getHandle(workflowId);
  const events = [];
  for (let after = 0; ; ) {
    const page = await handle.query('events', { after });
    events.push(...page.events);
    if (page.events.length === 0 || page.events.at(-1).seq >= page.last) break;
    after = page.events.at(-1).seq;
  }
  const seen = new Set();
  for (const ref of stubs(events, [])) {
    if (seen.has(ref.sha256)) continue;
    seen.add(ref.sha256);
    // A stub's scope is the workflow id of the run that stored it.
    const got = await get(ref.scope || workflowId, ref.sha256);
    const other = await get(otherWorkflowId, ref.sha256);
    console.log(JSON.stringify({
      sha256: ref.sha256,
      size: ref.size,
      scope: ref.scope,
      status: got.status,
      contentType: got.type,
      bodySha256: createHash('sha256').update(got.body).digest('hex'),
      bodyBase64: got.body.toString('base64'),
      otherWorkflowStatus: other.status,
    }));
  }
} finally {
  await connection.close();
}
