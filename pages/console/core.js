/* Console core: the shared namespace, page state, DOM helpers and the tab machinery.
   Every later console script starts with `var C = window.ltmConsole;` and takes what it
   needs from C. Functions that a later script defines (selectTab, selectSpace,
   loadOverview in main.js) are looked up on C when they are called. */
(function () {
  'use strict';
  // Tab order is the order of the tab buttons in index.html; each tab-*.js registers one.
  var TABS = [].map.call(document.querySelectorAll('#tablist [role="tab"]'), function (btn) {
    return btn.getAttribute('data-tab');
  });
  var S = {
    overview: null, overviewError: null,
    space: null,            // {scope_key, user_key}
    tab: TABS[0],
    views: {},              // tab -> {loading, data, error, ...}
    started: false
  };
  TABS.forEach(function (tab) { S.views[tab] = {}; });
  var C = window.ltmConsole = { S: S, TABS: TABS, tabs: {} };

  // ---------- helpers
  function $(id) { return document.getElementById(id); }
  function t(key, vars) {
    var s = langbot.t(key);
    if (vars) s = s.replace(/\{(\w+)\}/g, function (m, name) { return name in vars ? String(vars[name]) : m; });
    return s;
  }
  function h(tag, props) {
    var el = document.createElement(tag);
    if (props) Object.keys(props).forEach(function (k) {
      var v = props[k];
      if (v == null || v === false) return;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = v;
      else if (k.slice(0, 2) === 'on') el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    });
    for (var i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, kid) {
    if (kid == null || kid === false) return;
    if (Array.isArray(kid)) { kid.forEach(function (k) { append(el, k); }); return; }
    el.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  /* What the server says by code ({code, params}: a health line, an audit summary, a consolidation note),
     worded from the dictionaries (the plugin's vocabulary is built into them). A parameter may itself
     be {code, params} or a list of them. `fallback` (the server's English) is shown for a code this page
     does not know. */
  var MISSING = '\u0000';
  function said(value, fallback) {
    if (!value || typeof value !== 'object' || typeof value.code !== 'string') return fallback == null ? '' : String(fallback);
    var template = langbot.t(value.code, MISSING);
    if (template === MISSING) return fallback != null && fallback !== '' ? String(fallback) : value.code;
    var params = value.params || {};
    return template.replace(/\{(\w+)\}/g, function (m, name) { return name in params ? paramText(params[name]) : m; });
  }
  function paramText(v) {
    if (Array.isArray(v)) return v.map(paramText).join(langbot.t('common.listSeparator', '; '));
    if (v && typeof v === 'object') return said(v, '');
    return String(v);
  }
  // A word for a code the server sends (a status, a claim type, an operation): its term, else the code.
  function term(prefix, code) {
    if (code == null || code === '') return '';
    var word = langbot.t(prefix + code, MISSING);
    return word === MISSING ? String(code) : word;
  }
  function fill(el) { el.textContent = ''; for (var i = 1; i < arguments.length; i++) append(el, arguments[i]); }
  function fmtTime(iso) {
    if (!iso) return t('common.none');
    return String(iso).replace('T', ' ').replace(/(\.\d+)?(Z|\+00:00)$/, ' UTC');
  }
  function shortId(id) { return id && id.length > 13 ? id.slice(0, 8) + '…' : (id || ''); }
  // A speaker as people tell them apart: the display name and the tail of the sender id, since many share a
  // name (every visitor of LangBot's debug chat is "User"): "User (websocket_…4627af30)". An id up to 20
  // characters is shown whole; a longer one keeps its leading word ("websocket_") and its last 8.
  function speakerTail(id) {
    id = String(id || '');
    if (id.length <= 20) return id;
    var lead = /^[A-Za-z]+_/.exec(id);
    return (lead ? lead[0] : '') + '…' + id.slice(-8);
  }
  function who(name, id) {
    if (!name) return id ? speakerTail(id) : '';
    return id && id !== name ? name + ' (' + speakerTail(id) + ')' : name;
  }

  // ---------- tabs
  /* A tab-*.js file registers its tab:
       C.defineTab(name, {
         render: function (panel, view) {...},   // required: fills the panel from S.views[name]
         load: function () { return promise },   // optional: fetches view.data (see loadTab)
         needsSpace: false,                       // optional: load even with no space selected
         reset: function () {...}                 // optional: forget tab state when the space changes
       }); */
  function defineTab(name, def) {
    if (TABS.indexOf(name) === -1) throw new Error('Memory Console: index.html has no tab button for "' + name + '"');
    C.tabs[name] = def;
  }
  var generation = 0;
  function loadTab(tab) {
    var def = C.tabs[tab], loader = def.load;
    if (!loader) { renderPanel(tab); return Promise.resolve(); }
    if (!S.space && def.needsSpace !== false) { renderPanel(tab); return Promise.resolve(); }
    var view = S.views[tab], mine = ++generation, space = S.space;
    view.loading = true;
    view.token = mine;
    renderPanel(tab);
    return loader().then(function (data) {
      if (space !== S.space || view.token !== mine) return;
      view.data = data; view.error = null;
    }, function (err) {
      if (space !== S.space || view.token !== mine) return;
      view.error = err; view.data = null;
    }).then(function () {
      if (space !== S.space || view.token !== mine) return;
      view.loading = false;
      renderPanel(tab);
    });
  }
  function renderPanel(tab) {
    var panel = $('panel-' + tab);
    if (panel.hidden && tab !== S.tab) return;
    C.tabs[tab].render(panel, S.views[tab]);
  }

  C.$ = $; C.t = t; C.h = h; C.fill = fill; C.said = said; C.term = term; C.fmtTime = fmtTime; C.shortId = shortId;
  C.who = who;
  C.defineTab = defineTab; C.loadTab = loadTab; C.renderPanel = renderPanel;
})();
