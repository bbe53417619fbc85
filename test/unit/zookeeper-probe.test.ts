import t from 'tap';
import net from 'node:net';
import { zookeeper } from '../../infra/stack/zookeeper.js';

/**
 * The launcher starts ClickHouse only once ZooKeeper is ready. A ZooKeeper that has bound its port but is not
 * serving yet answers `imok` to `ruok` and refuses session handshakes; ClickHouse 18.16 connecting then crashed
 * (seen on a fresh machine, the JVM cold after the package install). Ready must mean serving: `srvr` shows a
 * `Mode:` line only then. The fake below answers the four-letter words as ZooKeeper 3.8 does.
 */
t.test('the ZooKeeper probe waits until the server serves sessions', async (t) => {
  let serving = false;
  const server = net.createServer((sock) => {
    sock.once('data', (d) => {
      const word = d.toString('utf8');
      if (word === 'ruok') sock.end('imok');
      else if (word === 'srvr')
        sock.end(
          serving
            ? 'Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.0/0\nMode: standalone\nNode count: 5\n'
            : 'This ZooKeeper instance is not currently serving requests\n',
        );
      else sock.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `zk://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  const early = await zookeeper.probe(url);
  t.equal(early.ok, false, 'bound but not serving (it would still say imok): not ready');
  t.match(early.detail, /not serving yet/);
  serving = true;
  const later = await zookeeper.probe(url);
  t.equal(later.ok, true, 'serving: ready');
});

t.test('nothing listening: not ready, with the reason', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const r = await zookeeper.probe(`zk://127.0.0.1:${port}`);
  t.equal(r.ok, false);
  t.match(r.detail, /ECONNREFUSED/);
});
