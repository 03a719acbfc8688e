// Node preload (`node -r bind-loopback.js ...`): makes every TCP server of the process listen on 127.0.0.1.
// kinesis-mock hard-codes 0.0.0.0 and has no setting for it; the tests talk to 127.0.0.1 only, and an
// emulator without authentication must not be reachable from other machines.
'use strict';
const net = require('net');
const LOOPBACK = '127.0.0.1';
const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (first !== null && typeof first === 'object' && !('_handle' in first) && !('fd' in first) &&
      first.path === undefined) {
    // listen(options[, callback]): a TCP server described by { port, host, ... }.
    args[0] = Object.assign({}, first, { host: LOOPBACK });
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): replace the host, or insert it when it was left out.
    if (typeof args[1] === 'string') args[1] = LOOPBACK;
    else args.splice(1, 0, LOOPBACK);
  }
  return originalListen.apply(this, args);
};
