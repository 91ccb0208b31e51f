// SPDX-License-Identifier: GPL-2.0
// memleakbpf --html: draws the sites, stacks, flame graph, processes and
// reachability from the page's JSON (report_html.c builds this in). Plain
// DOM, no library; every name goes in as text (textContent), never as HTML.
(function () {
	'use strict';
	var D = JSON.parse(document.getElementById('data').textContent);
	var S = D.strings, F = D.frames;
	var LIBC = ['libc.so', 'libc-', 'ld-linux', 'ld-musl', 'ld.so', 'libm.so', 'libpthread.so',
		    'libdl.so', 'librt.so'];
	var CXX = ['libstdc++.so', 'libc++.so', 'libc++abi.so', 'libsupc++', 'libgcc_s.so'];

	function str(i) { return i === undefined || i < 0 ? null : S[i]; }
	function el(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls) e.className = cls;
		if (text !== undefined && text !== null) e.textContent = String(text);
		return e;
	}
	function add(parent) {
		for (var i = 1; i < arguments.length; i++)
			if (arguments[i] !== null) parent.appendChild(
				typeof arguments[i] === 'string' ? document.createTextNode(arguments[i]) : arguments[i]);
		return parent;
	}
	function count(n) { return Number(n).toLocaleString('en-US'); }
	// Under --sample or -s every amount of bytes is an estimate: "~", as the text says it.
	function size(b) {
		var u = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0, est = D.sampling ? '~' : '';
		b = Math.round(Number(b));
		if (b < 1024) return est + b + (b === 1 ? ' byte' : ' bytes');
		while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
		return est + b.toFixed(1) + ' ' + u[i];
	}
	function rate(v) { return (v < 0 ? '-' : '+') + size(Math.abs(v)) + '/s'; }
	function base(p) { return p ? p.slice(p.lastIndexOf('/') + 1) : p; }
	function starts(s, list) {
		for (var i = 0; i < list.length; i++) if (s.indexOf(list[i]) === 0) return true;
		return false;
	}
	function isShared(b) { return /\.so(\.|$)/.test(b); }

	// A frame: [function, file, line, module, flags (1 own, 2 Python, 4 inlined), offset].
	function frameName(fi) {
		var fr = F[fi], fn = str(fr[0]), file = str(fr[1]), mod = str(fr[3]);
		if (fn && (fr[4] & 2) && file) return fn + ' (' + base(file) + ':' + fr[2] + ')';
		if (fn) return fn;
		return mod ? base(mod) + '+0x' + fr[5].toString(16) : '0x' + fr[5].toString(16);
	}
	function frameLoc(fi) {
		var fr = F[fi], file = str(fr[1]);
		return file ? file + (fr[2] ? ':' + fr[2] : '') : null;
	}
	// Whose code, as the SVG flame graph colours it (report_svg.c: drawn_kind).
	function frameKind(fi) {
		var fr = F[fi], mod = str(fr[3]), file = str(fr[1]), b;
		if (fr[4] & 2) return fr[4] & 1 ? 'k-py' : 'k-pylib';
		if (fr[4] & 1) return 'k-prog';
		if (!mod) return 'k-unk';
		b = base(mod);
		if (isShared(b)) return starts(b, LIBC) ? 'k-libc' : starts(b, CXX) ? 'k-cxx' : 'k-lib';
		return file && file.indexOf('/c++/') >= 0 ? 'k-cxx' : 'k-lib';
	}
	function frameItem(fi) {
		var fr = F[fi], li = el('li', fr[4] & 1 ? 'own' : ''), loc = frameLoc(fi), mod = str(fr[3]);
		add(li, el('code', 'fn-name', frameName(fi)));
		if (loc && !(fr[4] & 2)) add(li, ' ', el('span', 'loc mono', loc));
		else if (loc) add(li, ' ', el('span', 'loc mono', loc));
		if (mod && !(fr[4] & 2)) add(li, ' ', el('span', 'mod mono', '[' + mod + ']'));
		if (fr[4] & 2) add(li, el('span', 'tag py', 'Python'));
		if (fr[4] & 1) add(li, el('span', 'tag own', 'your code'));
		if (fr[4] & 4) add(li, el('span', 'tag inl', 'inlined'));
		return li;
	}
	function trendEl(t) { return el('span', 'trend t-' + t, t); }

	// ---------------------------------------------------------------- sites
	function stackEl(s) {
		var d = el('div', 'stack'), h = el('div', 'stack-head');
		add(h, size(s.b) + ' in ' + count(s.a) + ' allocation' + (s.a === 1 ? '' : 's') +
		    ' from ' + str(s.api) + ', ', trendEl(str(s.trend)));
		if (s.slope && str(s.trend) === 'growing') add(h, ' ' + rate(s.slope));
		add(h, ', ' + size(s.tb) + ' allocated since tracing began');
		if (D.processes.length > 1) add(h, ', pid ' + pidOf(s.proc));
		if (s.reach) add(h, ' (lost ' + size(s.reach[0]) + ', indirectly ' + size(s.reach[1]) +
				    ', possibly ' + size(s.reach[2]) + ', reachable ' + size(s.reach[3]) + ')');
		add(d, h);
		var ol = el('ol', 'frames');
		if (str(s.marker)) add(ol, el('li', '', str(s.marker)));
		s.f.forEach(function (fi) { add(ol, frameItem(fi)); });
		return add(d, ol);
	}
	function pidOf(tag) {
		for (var i = 0; i < D.processes.length; i++)
			if (D.processes[i].tag === tag) return D.processes[i].pid;
		return '?';
	}
	function siteCell(site) {
		var td = el('td', 'site');
		if (site.frame < 0) return add(td, '[stack unavailable]');
		var fr = F[site.frame], loc = frameLoc(site.frame), mod = str(fr[3]);
		add(td, el('code', 'fn-name', frameName(site.frame)));
		if (loc) add(td, ' ', el('span', 'loc mono', loc));
		if (mod && !(fr[4] & 2)) add(td, ' ', el('span', 'mod mono', '[' + base(mod) + ']'));
		if (fr[4] & 2) add(td, el('span', 'tag py', 'Python'));
		if (site.own) add(td, el('span', 'tag own', 'your code'));
		if (site.import) add(td, el('span', 'tag inl', 'import'));
		if (site.runtime >= 0) add(td, el('span', 'tag inl', 'not your code'), ' ', str(site.runtime));
		return td;
	}
	var COLS = [
		{ title: '#' }, { title: 'Site (innermost frame of your code)' }, { title: 'Trend' },
		{ title: 'Outstanding', num: true, key: function (s) { return s.b; } },
		{ title: 'Blocks', num: true },
		{ title: 'Growth', num: true, key: function (s) { return s.growing ? s.slope : -Infinity; } },
		{ title: 'Churn (allocated)', num: true, key: function (s) { return s.tb; } },
		{ title: 'Stacks', num: true }
	];
	// --reach: memcheck's split of each site, the lost bytes first.
	if (D.reach)
		COLS.splice(7, 0, { title: 'Lost (reach)', num: true,
				    key: function (s) { return s.reach ? s.reach[0] + s.reach[1] : 0; } });
	function reachCell(site) {
		var td = el('td', 'num');
		if (!site.reach) return td;
		['lost ', 'indirectly ', 'possibly ', 'reachable '].forEach(function (w, k) {
			if (site.reach[k]) add(td, el('div', '', w + size(site.reach[k])));
		});
		return td;
	}
	function siteRows(tbody, order) {
		tbody.textContent = '';
		order.forEach(function (i) {
			var site = D.sites[i], tr = el('tr'), td = el('td', 'num', i + 1);
			add(tr, td, siteCell(site), add(el('td'), trendEl(str(site.trend))),
			    el('td', 'num', size(site.b)), el('td', 'num', count(site.a)),
			    el('td', 'num', site.growing ? rate(site.slope) : ''),
			    el('td', 'num', size(site.tb) + ' in ' + count(site.ta) +
			       (D.duration_s > 0 ? ', ' + size(site.tb / D.duration_s) + '/s' : '')),
			    D.reach ? reachCell(site) : null, el('td', 'num', count(site.n)));
			var btn = el('button', 'more', 'Show ' + site.stacks.length +
				     (site.stacks.length === 1 ? ' stack' : ' stacks'));
			btn.setAttribute('aria-expanded', 'false');
			tr.children[1].appendChild(el('br'));
			tr.children[1].appendChild(btn);
			add(tbody, tr);
			var more = el('tr', 'stacks'), cell = el('td');
			cell.colSpan = COLS.length;
			more.hidden = true;
			add(more, cell);
			add(tbody, more);
			btn.addEventListener('click', function () {
				if (!cell.firstChild) {
					site.stacks.forEach(function (k) { add(cell, stackEl(D.stacks[k])); });
					if (site.left_out[0])
						add(cell, el('p', 'note', 'and ' + count(site.left_out[0]) +
							     ' smaller stacks: ' + size(site.left_out[1]) +
							     ' (--all-stacks keeps them)'));
				}
				more.hidden = !more.hidden;
				btn.setAttribute('aria-expanded', String(!more.hidden));
				btn.textContent = (more.hidden ? 'Show ' : 'Hide ') +
					btn.textContent.replace(/^\S+ /, '');
			});
		});
	}
	function sites() {
		var sec = document.getElementById('sites');
		if (!D.sites.length) return add(sec, el('p', 'note', 'No outstanding allocation.'));
		add(sec, el('p', 'note', count(D.sites.length) + (D.sites.length === 1 ? ' site' : ' sites') +
			    ' from ' + count(D.nr_stacks) + (D.nr_stacks === 1 ? ' stack' : ' stacks') + ', grouped by their innermost frame of your code; each site keeps its ' +
			    'biggest stacks, as the JSON report does. Sort by a column\'s underlined title.' +
			    (D.sampling ? ' Sampled (--sample, -s): every figure of bytes and blocks is an ' +
			     'estimate, ~ marks it; the text and JSON reports give each its 95% interval.' : '')));
		var legend = add(el('p', 'legend'), 'Trend, as the text report says it: ');
		[['growing', 'steadily, the leak-like'], ['stepped', 'rose, not steadily'], ['stable', ''],
		 ['varying', 'up and down'], ['shrinking', ''],
		 ['start-up', 'held since start-up'], ['unknown', 'too few reports to tell']]
			.forEach(function (t) { add(legend, add(el('span'), trendEl(t[0]), t[1] ? ' ' + t[1] : '')); });
		add(sec, legend);
		var table = el('table', 'sites'), thead = el('thead'), hr = el('tr'), tbody = el('tbody');
		var order = D.sites.map(function (s, i) { return i; });
		COLS.forEach(function (c) {
			var th = el('th', c.num ? 'num' : '');
			if (!c.key) { add(hr, add(th, c.title)); return; }
			var b = el('button', '', c.title);
			b.addEventListener('click', function () {
				Array.prototype.forEach.call(hr.children, function (h) { h.removeAttribute('aria-sort'); });
				th.setAttribute('aria-sort', 'descending');
				order.sort(function (x, y) { return c.key(D.sites[y]) - c.key(D.sites[x]) || x - y; });
				siteRows(tbody, order);
			});
			add(hr, add(th, b));
		});
		hr.children[3].setAttribute('aria-sort', 'descending');
		add(sec, add(table, add(thead, hr), tbody));
		siteRows(tbody, order);
		// A link may open sites' stacks: page.html#open=1,3 (or #open=all).
		var open = /(?:^#|&)open=([^&]*)/.exec(location.hash);
		if (open)
			Array.prototype.forEach.call(tbody.querySelectorAll('button.more'), function (b, i) {
				if (open[1] === 'all' || open[1].split(',').indexOf(String(i + 1)) >= 0) b.click();
			});
	}

	// ---------------------------------------------------------------- flame graph
	var ROW = 18, MINPX = 0.4;
	function tree(flat) {
		var nodes = [], path = [];
		for (var i = 0; i < flat.length; i += 5) {
			var n = { d: flat[i], f: flat[i + 1], name: flat[i + 2], v: flat[i + 3], a: flat[i + 4],
				  kids: [], x: 0 };
			path.length = n.d;
			n.parent = n.d ? path[n.d - 1] : null;
			if (n.parent) {
				var p = n.parent, last = p.kids[p.kids.length - 1];
				n.x = last ? last.x + last.v : p.x;
				p.kids.push(n);
			}
			path[n.d] = n;
			nodes.push(n);
		}
		return nodes;
	}
	function nodeName(n) { return n.f >= 0 ? frameName(n.f) : str(n.name); }
	function nodeKind(n) {
		if (n.f >= 0) return frameKind(n.f);
		var s = str(n.name);
		return !n.d || s.charAt(0) === '[' ? 'k-other' : 'k-api';
	}
	function flame() {
		var sec = document.getElementById('flame');
		var trees = { outstanding: tree(D.flame.outstanding), allocated: tree(D.flame.allocated) };
		var which = 'outstanding', nodes = trees[which], zoomed = nodes[0], query = '';
		var ctl = el('div', ''), graph = el('div', ''), status = el('span', ''), detail = el('div', '');
		ctl.id = 'flame-controls'; graph.id = 'flame-graph'; status.id = 'flame-status';
		detail.id = 'flame-detail';
		add(sec, el('p', 'note', 'An icicle: the root on top, each frame\'s callees below it, ' +
			    'widths proportional to bytes. Click a frame to zoom into it, a caller above ' +
			    'it to zoom out. Frames too narrow to see are merged into grey boxes.'));
		var legend = el('p', 'legend');
		[['k-prog', 'your code'], ['k-py', 'your Python'], ['k-pylib', 'Python libraries'],
		 ['k-libc', 'C library'], ['k-cxx', 'C++ runtime'], ['k-lib', 'other libraries'],
		 ['k-unk', 'unknown module'], ['k-api', 'allocation function'], ['k-other', 'merged, markers']]
			.forEach(function (k) { add(legend, add(el('span'), el('span', 'sw ' + k[0]), k[1])); });
		['outstanding', 'allocated'].forEach(function (w) {
			var lab = el('label'), r = el('input');
			r.type = 'radio'; r.name = 'flame-weight'; r.value = w; r.checked = w === which;
			r.disabled = !trees[w].length;
			r.addEventListener('change', function () {
				which = w; nodes = trees[w]; zoomed = nodes[0]; draw();
			});
			add(ctl, add(lab, r, ' ' + (w === 'outstanding' ? 'outstanding bytes' :
						    'allocated bytes (since tracing began, freed or not)')));
		});
		var form = el('form'), input = el('input'), go = el('button', '', 'Search'),
		    reset = el('button', '', 'Reset zoom');
		input.type = 'search'; input.placeholder = 'function, file or module';
		input.setAttribute('aria-label', 'Search the flame graph');
		form.addEventListener('submit', function (e) { e.preventDefault(); query = input.value; draw(); });
		// A link may carry a search: page.html#search=NAME.
		var asked = /(?:^#|&)search=([^&]*)/.exec(location.hash);
		if (asked) input.value = query = decodeURIComponent(asked[1]);
		reset.type = 'button';
		reset.addEventListener('click', function () { zoomed = nodes[0]; draw(); });
		add(ctl, add(form, input, ' ', go), reset, status);
		add(sec, legend, ctl, graph, detail);
		function matches(n) {
			if (!query) return false;
			var q = query.toLowerCase(), s = nodeName(n);
			if (n.f >= 0) s += ' ' + (frameLoc(n.f) || '') + ' ' + (str(F[n.f][3]) || '');
			return s.toLowerCase().indexOf(q) >= 0;
		}
		function tip(n) {
			var root = nodes[0], t = nodeName(n), loc = n.f >= 0 ? frameLoc(n.f) : null;
			if (loc) t += '\nat ' + loc;
			if (n.f >= 0 && str(F[n.f][3])) t += '\nin ' + str(F[n.f][3]);
			return t + '\n' + size(n.v) + ' (' + (100 * n.v / root.v).toFixed(2) + '% of all), ' +
				count(n.a) + ' allocations';
		}
		function draw() {
			graph.textContent = '';
			if (!nodes.length) {
				add(graph, el('p', 'note', 'No ' + which + ' bytes.'));
				return;
			}
			var W = graph.clientWidth || 1200, z = zoomed, scale = W / z.v, above = [], depth = 0;
			for (var p = z.parent; p; p = p.parent) above.unshift(p);
			var found = 0, foundBytes = 0, inMatch = [];
			function box(n, left, width, row, dim) {
				var b = el('div', 'fr ' + nodeKind(n) + (dim ? ' dim' : ''));
				b.style.left = left.toFixed(2) + 'px';
				b.style.width = Math.max(width, 1).toFixed(2) + 'px';
				b.style.top = (row * ROW) + 'px';
				b.title = tip(n);
				if (width > 24) b.textContent = nodeName(n);
				if (matches(n)) b.className += ' match';
				b.addEventListener('click', function () { zoomed = n; draw(); });
				b.addEventListener('mouseenter', function () { detail.textContent = tip(n).replace(/\n/g, ' · '); });
				graph.appendChild(b);
			}
			above.forEach(function (n, i) { box(n, 0, W, i, true); });
			var row0 = above.length;
			nodes.forEach(function (n) {
				var m = matches(n);
				inMatch.length = n.d;
				var under = inMatch.some(Boolean);
				if (m) { found++; if (!under) foundBytes += n.v; }
				inMatch[n.d] = m;
				if (n.d < z.d || n.x < z.x || n.x + n.v > z.x + z.v) return;
				var w = n.v * scale;
				if (w < MINPX) return;
				box(n, (n.x - z.x) * scale, w, row0 + n.d - z.d, false);
				depth = Math.max(depth, row0 + n.d - z.d + 1);
			});
			graph.style.height = (depth * ROW + 2) + 'px';
			status.textContent = (z !== nodes[0] ? 'Zoomed into ' + nodeName(z) + '. ' : '') +
				(query ? found + ' frames match "' + query + '": ' + size(foundBytes) + ', ' +
				 (100 * foundBytes / nodes[0].v).toFixed(1) + '% of the ' + which + ' bytes' : '');
			status.setAttribute('data-matches', String(found));
		}
		draw();
		window.addEventListener('resize', draw);
	}

	// ---------------------------------------------------------------- processes, reach
	function processes() {
		if (D.processes.length < 2) return;
		var sec = document.getElementById('processes');
		sec.hidden = false;
		add(sec, el('h2', '', 'Processes (--follow)'),
		    el('p', 'note', 'Each traced process and the biggest stacks it holds; the sites below ' +
		       'sum them across processes.'));
		D.processes.forEach(function (p) {
			var h = el('h3', '', 'pid ' + p.pid + (p.tag ? ' (parent ' + p.ppid + ')' : ' (the target)') +
				   (p.exited ? ', exited' : '') + (p.execed ? ', ran exec' : '') + ': ' +
				   size(p.b) + ' in ' + count(p.a) + (p.a === 1 ? ' block' : ' blocks'));
			add(sec, h);
			if (str(p.command)) add(sec, el('code', '', str(p.command)));
			var mine = D.stacks.filter(function (s) { return s.proc === p.tag; }).slice(0, 5);
			var ul = el('ul');
			mine.forEach(function (s) {
				var site = D.sites[s.site];
				add(ul, add(el('li'), size(s.b) + ' from ' + str(s.api) + ' at ',
					    el('code', '', site && site.frame >= 0 ? frameName(site.frame) :
					       s.f.length ? frameName(s.f[0]) : '[stack unavailable]')));
			});
			add(sec, ul);
		});
	}
	function reach() {
		if (!D.reach) return;
		var sec = document.getElementById('reach'), t = el('table'), tb = el('tbody');
		sec.hidden = false;
		add(sec, el('h2', '', 'Reachability (--reach)'),
		    el('p', 'note', 'At ' + (D.reach.at_exit ? 'the exit' : 'the scan') + ', ' +
		       D.reach.t_s.toFixed(1) + ' s after tracing began; memcheck\'s meanings.'));
		add(t, add(el('thead'), add(el('tr'), el('th', '', 'Kind'), el('th', 'num', 'Bytes'),
					  el('th', 'num', 'Blocks'))));
		D.reach.kinds.forEach(function (k) {
			add(tb, add(el('tr'), el('td', '', str(k[0])), el('td', 'num', size(k[1])),
				    el('td', 'num', count(k[2]))));
		});
		add(sec, add(t, tb));
	}
	function toc() {
		var nav = document.getElementById('toc');
		['timeline', 'reach', 'processes', 'sites', 'flame'].forEach(function (id) {
			var s = document.getElementById(id);
			if (!s || s.hidden) return;
			var a = el('a', '', s.querySelector('h2').textContent);
			a.href = '#' + id;
			add(nav, a);
		});
	}
	reach();
	processes();
	sites();
	flame();
	toc();
})();
