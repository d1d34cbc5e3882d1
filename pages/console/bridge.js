/* Page-SDK bridge: postMessage to the LangBot page host, i18n and theme.
   Same surface as langbot-page-sdk.js (t, applyI18n, onReady, onThemeChange,
   onLanguageChange, api), written for a blob: iframe: the dictionaries are inline
   (the build puts every i18n/<language>.json into the #ltm-i18n JSON block). */
(function () {
  'use strict';
  var THEMES = {
    light: { bg: '#ffffff', 'bg-card': '#f8fafc', text: '#0a0a0a', 'text-muted': '#71717a', border: '#e4e4e7', accent: '#2563eb' },
    dark: { bg: '#0a0a0a', 'bg-card': '#171717', text: '#fafafa', 'text-muted': '#a1a1aa', border: '#27272a', accent: '#3b82f6' }
  };
  /* one dictionary per language (same keys), the inline JSON block before this script */
  var LTM_I18N = JSON.parse(document.getElementById('ltm-i18n').textContent);
  var SAFE_ATTRS = ['placeholder', 'title', 'alt', 'aria-label', 'aria-description'];
  var state = { theme: 'light', language: 'en-US', ready: false, seq: 0 };
  var hooks = { ready: [], theme: [], language: [] };
  var pending = {};

  /* The WebUI's tag (zh-Hant, ja-JP, ...) as a dictionary name; a language without one reads English. */
  function langKey(lang) {
    var key = String(lang || '').replace(/-/g, '_');
    if (LTM_I18N[key]) return key;
    if (/^zh(_Hant|_TW|_HK|_MO)/i.test(key)) return LTM_I18N.zh_Hant ? 'zh_Hant' : 'zh_Hans';
    if (/^zh/i.test(key)) return 'zh_Hans';
    if (/^ja/i.test(key) && LTM_I18N.ja_JP) return 'ja_JP';
    return 'en_US';
  }
  function dictFor(lang) { return LTM_I18N[langKey(lang)]; }
  function fire(list, arg) { list.forEach(function (cb) { try { cb(arg); } catch (e) { console.warn(e); } }); }
  function applyTheme(theme) {
    state.theme = theme === 'dark' ? 'dark' : 'light';
    var root = document.documentElement, colors = THEMES[state.theme];
    root.classList.remove('light', 'dark');
    root.classList.add(state.theme);
    root.setAttribute('data-theme', state.theme);
    Object.keys(colors).forEach(function (k) { root.style.setProperty('--langbot-' + k, colors[k]); });
  }
  function applyI18n(root) {
    var dict = dictFor(state.language);
    document.documentElement.lang = { en_US: 'en', zh_Hans: 'zh-Hans', zh_Hant: 'zh-Hant', ja_JP: 'ja' }[langKey(state.language)];
    (root || document).querySelectorAll('[data-i18n]').forEach(function (el) {
      var value = dict[el.getAttribute('data-i18n')];
      if (value == null) return;
      var attr = el.getAttribute('data-i18n-attr');
      if (attr && SAFE_ATTRS.indexOf(attr) !== -1) el.setAttribute(attr, value); else el.textContent = value;
    });
  }
  function becomeReady() {
    if (state.ready) return;
    state.ready = true;
    applyI18n();
    fire(hooks.ready.splice(0), { theme: state.theme, language: state.language });
  }

  window.addEventListener('message', function (event) {
    if (event.source !== window.parent) return;   // only the LangBot page that embeds us
    var msg = event.data;
    if (!msg || typeof msg !== 'object') return;
    if (msg.type === 'langbot:context') {
      var oldTheme = state.theme, oldLang = state.language;
      if (typeof msg.language === 'string' && msg.language) state.language = msg.language;
      applyTheme(msg.theme);
      if (!state.ready) { becomeReady(); return; }
      if (oldTheme !== state.theme) fire(hooks.theme, state.theme);
      if (oldLang !== state.language) { applyI18n(); fire(hooks.language, state.language); }
    } else if (msg.type === 'langbot:api:response' && pending[msg.requestId]) {
      var entry = pending[msg.requestId];
      delete pending[msg.requestId];
      clearTimeout(entry.timer);
      if (msg.error) entry.reject(new Error(String(msg.error))); else entry.resolve(msg.data);
    }
  });

  applyTheme('light');
  // A host that never sends its context (an older LangBot, or the file opened directly).
  setTimeout(function () {
    if (!state.ready && navigator.language) state.language = navigator.language;
    becomeReady();
  }, 1500);

  window.langbot = {
    get theme() { return state.theme; },
    get language() { return state.language; },
    get ready() { return state.ready; },
    onReady: function (cb) { if (state.ready) cb({ theme: state.theme, language: state.language }); else hooks.ready.push(cb); },
    onThemeChange: function (cb) { hooks.theme.push(cb); },
    onLanguageChange: function (cb) { hooks.language.push(cb); },
    t: function (key, fallback) { var v = dictFor(state.language)[key]; return v != null ? v : (fallback != null ? fallback : key); },
    applyI18n: applyI18n,
    api: function (endpoint, body, method) {
      return new Promise(function (resolve, reject) {
        var id = 'ltm_' + (++state.seq) + '_' + Date.now();
        pending[id] = { resolve: resolve, reject: reject, timer: setTimeout(function () {
          if (pending[id]) { delete pending[id]; reject(new Error('Request timeout')); }
        }, 30000) };
        window.parent.postMessage({ type: 'langbot:api', requestId: id, endpoint: endpoint,
          method: method || 'POST', body: body === undefined ? null : body }, '*');
      });
    }
  };
})();
