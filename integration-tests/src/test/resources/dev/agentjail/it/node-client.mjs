// Node's own HTTP stack through the proxy: absolute-form for http://, CONNECT + TLS for https://.
// Node 20's fetch cannot use a proxy without the undici package, so this uses node:http and node:tls.
// Usage: node node-client.mjs PROXY_PORT HTTP_PORT HTTPS_PORT CA_PEM; prints one JSON object.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

const [proxyPort, httpPort, httpsPort, caFile] = process.argv.slice(2);
const ca = fs.readFileSync(caFile);
const LIMIT_MS = 20000;

function collect(res, resolve) {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (chunk) => (body += chunk));
  res.on('end', () =>
    resolve({ status: res.statusCode, reason: res.headers['x-agentjail-reason'] ?? null, body }));
}

function plain(authority, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: proxyPort,
        method: 'POST',
        path: `http://${authority}${path}`,
        headers: { Host: authority, 'Content-Type': 'text/plain' },
        agent: false,
      },
      (res) => collect(res, resolve),
    );
    req.setTimeout(LIMIT_MS, () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

function throughTunnel(host, port, path) {
  return new Promise((resolve, reject) => {
    const connect = http.request({
      host: '127.0.0.1',
      port: proxyPort,
      method: 'CONNECT',
      path: `${host}:${port}`,
      headers: { Host: `${host}:${port}` },
      agent: false,
    });
    connect.setTimeout(LIMIT_MS, () => connect.destroy(new Error('timeout')));
    connect.on('error', reject);
    connect.on('response', (res) => {
      // A refused CONNECT is answered like any response, with its body.
      collect(res, (r) => resolve({ connectStatus: r.status, reason: r.reason, body: r.body }));
    });
    connect.on('connect', (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        resolve({ connectStatus: res.statusCode, reason: res.headers['x-agentjail-reason'] ?? null });
        return;
      }
      const req = https.request(
        {
          host,
          port,
          path,
          servername: host,
          ca, // the only trust anchor: the upstream's test certificate
          // No `agent` option: with `agent: false` Node makes a fresh Agent, which ignores createConnection and
          // dials host:port itself, bypassing the tunnel (and the proxy) wherever the name resolves.
          createConnection: () => tls.connect({ socket, servername: host, ca }),
        },
        (r) =>
          collect(r, (out) => {
            socket.destroy();
            resolve({ connectStatus: 200, ...out });
          }),
      );
      req.setTimeout(LIMIT_MS, () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    });
    connect.end();
  });
}

const result = {
  plain: await plain(`upstream.test:${httpPort}`, '/from/node?q=1', 'hello from node'),
  plainDenied: await plain('denied.test', '/x', 'nope'),
  tunnel: await throughTunnel('upstream.test', httpsPort, '/secure/node'),
  tunnelDenied: await throughTunnel('denied.test', 443, '/'),
};
process.stdout.write(JSON.stringify(result));
