// l4.js: the endpoints of nginx's stream servers (njs 0.7.9, Debian's
// libnginx-mod-stream-js), set per connection with js_set. nginx.conf holds
// the listeners only; pkg/nginx writes one small JSON file per listener
// under $l4_dir (written atomically, so a connection reads a whole one):
//   <protocol>-<port>.json  {"endpoints": ["10.0.0.1:5432", "[fd00::1]:5432"]}
//   passthrough.json        {"hosts": {"argocd.example.com": ["10.0.0.7:8443"]}}
// and one per port of a Gateway's TCP, UDP or TLS listener, whose backends
// share the connections by weight:
//   tcp-<port>.json, udp-<port>.json  {"backends": [{"weight": 1, "endpoints": [...]}]}
//   tls-<port>.json  {"hosts": {"abc.example.com": [backends], "*.example.com": [...], "": [...]}}
// On a TLS port the SNI name picks the backends: the exact name, else the
// longest wildcard that matches it, else "" (any name).
// Every session runs in a fresh VM, so each reads its own file again: an
// endpoint change is served by the next connection, without a reload.
// No file, a broken file or no endpoints: the connection goes to a server
// that closes it at once ($l4_closed; a datagram to $l4_closed_udp is
// dropped), and the reason is logged once.

var fs = require('fs');

// read returns the parsed file name of $l4_dir, or null (logged).
function read(s, name) {
    var path = s.variables.l4_dir + '/' + name;
    try {
        return JSON.parse(fs.readFileSync(path, 'utf8'));
    } catch (e) {
        s.error('l4: endpoint file ' + path + ' unusable: ' + e.message);
        return null;
    }
}

// closed is the target that ends the session at once.
function closed(s) {
    return s.variables.protocol === 'UDP' ? s.variables.l4_closed_udp : s.variables.l4_closed;
}

// pick returns a uniformly random item of list (an endpoint "addr:port"),
// or the closed target when there is none.
function pick(s, list, what) {
    if (!Array.isArray(list) || list.length === 0) {
        s.warn('l4: no endpoints for ' + what);
        return closed(s);
    }
    var e = list[Math.floor(Math.random() * list.length)];
    if (typeof e !== 'string' || e === '') {
        s.error('l4: malformed endpoint for ' + what);
        return closed(s);
    }
    return e;
}

// weighted returns the endpoints of a backend of list picked at random by
// weight, or null when no backend has a weight.
function weighted(list) {
    if (!Array.isArray(list)) {
        return null;
    }
    var total = 0;
    var i;
    for (i = 0; i < list.length; i++) {
        total += (list[i] && list[i].weight > 0) ? list[i].weight : 0;
    }
    if (total <= 0) {
        return null;
    }
    var r = Math.random() * total;
    for (i = 0; i < list.length; i++) {
        var w = (list[i] && list[i].weight > 0) ? list[i].weight : 0;
        if (r < w) {
            return list[i].endpoints;
        }
        r -= w;
    }
    return null;
}

// target is $l4_target: an endpoint of the listener's Service, or of a
// backend of a Gateway route picked by weight.
function target(s) {
    var name = s.variables.protocol.toLowerCase() + '-' + s.variables.server_port;
    var f = read(s, name + '.json');
    if (f === null) {
        return closed(s);
    }
    if (f.backends !== undefined) {
        return pick(s, weighted(f.backends), name);
    }
    return pick(s, f.endpoints, name);
}

// lookup returns the entry of hosts for name: exact, else the longest
// wildcard that matches it, else the entry for any name ("").
function lookup(hosts, name) {
    var has = function (k) { return Object.prototype.hasOwnProperty.call(hosts, k); };
    if (name !== '' && has(name)) {
        return hosts[name];
    }
    var i = name.indexOf('.');
    while (i >= 0) {
        if (has('*' + name.substring(i))) {
            return hosts['*' + name.substring(i)];
        }
        i = name.indexOf('.', i + 1);
    }
    return has('') ? hosts[''] : null;
}

// sni_target is $l4_sni of a Gateway's TLS passthrough listener: an
// endpoint of the route of the client's SNI name.
function sni_target(s) {
    var name = 'tls-' + s.variables.server_port;
    var f = read(s, name + '.json');
    if (f === null || typeof f.hosts !== 'object' || f.hosts === null) {
        return s.variables.l4_closed;
    }
    var route = lookup(f.hosts, sni(s));
    if (route === null) {
        s.warn('l4: no route for this SNI name on ' + name);
        return s.variables.l4_closed;
    }
    return pick(s, weighted(route), name);
}

// sni is the client's SNI name, lower case ('' without one).
function sni(s) {
    return (s.variables.ssl_preread_server_name || '').toLowerCase();
}

// hosts returns the passthrough hosts, or null (logged).
function hosts(s) {
    var f = read(s, 'passthrough.json');
    if (f === null || typeof f.hosts !== 'object' || f.hosts === null) {
        return null;
    }
    return f.hosts;
}

// front is $l4_front of the public HTTPS listener: the passthrough hop for
// a passthrough host, the HTTPS server for anything else (other hosts, no
// SNI, not TLS, no passthrough file).
function front(s) {
    var h = hosts(s);
    var name = sni(s);
    if (h !== null && name !== '' && Object.prototype.hasOwnProperty.call(h, name)) {
        return s.variables.l4_hop;
    }
    return s.variables.l4_https;
}

// passthrough is $l4_passthrough of the hop: an endpoint of the host.
function passthrough(s) {
    var h = hosts(s);
    var name = sni(s);
    if (h === null || !Object.prototype.hasOwnProperty.call(h, name)) {
        s.warn('l4: not a passthrough host any more');
        return s.variables.l4_closed;
    }
    return pick(s, h[name], 'a passthrough host');
}

export default { target, sni_target, front, passthrough };
