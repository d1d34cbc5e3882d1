/* Conversation tab: the selected chat's conversation record (its rolling summary and recorded turns),
   the summary edited in place (checked like a model's summary; audited) and the record cleared. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime, term = C.term;
  var call = C.call, spaceBody = C.spaceBody, loadTab = C.loadTab, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, needSpace = C.needSpace,
    head = C.head, refreshBtn = C.refreshBtn, toast = C.toast, confirmDialog = C.confirmDialog;

  var state = { editing: false, notice: null };

  function done(message) {
    state.editing = false; state.notice = { kind: 'ok', message: message }; toast(message);
    S.views.audit = {}; S.views.export = {};
    return loadTab('conversation');
  }
  function failed(err) { state.notice = { kind: 'error', error: err }; renderPanel('conversation'); }

  function summaryCard(d) {
    var s = d.record.summary, limit = d.settings.summary_max_chars;
    if (state.editing) {
      var box = h('textarea', { id: 'conversation-summary-text', rows: 8, maxlength: limit ? String(limit) : null });
      box.value = s.text || '';
      return h('form', { class: 'card stack', id: 'conversation-summary-form', novalidate: true, onsubmit: function (e) {
        e.preventDefault();
        call('/conversation/summary', spaceBody({ text: box.value })).then(function () {
          return done(t('conversation.saved'));
        }, failed);
      } },
        h('h3', null, t('conversation.summary')),
        h('label', { class: 'field' }, h('span', null, t('conversation.summaryLimit', { chars: limit || '?' })), box),
        h('p', { class: 'help' }, t('conversation.editHelp')),
        h('div', { class: 'row end' },
          h('button', { type: 'button', class: 'btn', onclick: function () { state.editing = false; renderPanel('conversation'); } },
            t('common.cancel')),
          h('button', { type: 'submit', class: 'btn primary', 'data-action': 'save' }, t('conversation.save'))));
    }
    return h('article', { class: 'card stack', id: 'conversation-summary' },
      h('h3', null, t('conversation.summary')),
      s.text ? h('p', { class: 'ep-content', style: 'white-space:pre-wrap' }, s.text)
        : h('div', { class: 'empty' }, t('conversation.noSummary')),
      h('div', { class: 'ep-meta' },
        h('span', null, t('conversation.summaryMeta', { source: term('summary_source.', s.source),
          folded: s.folded || 0, time: fmtTime(s.updated_at) }))),
      h('div', { class: 'row end' },
        h('button', { type: 'button', class: 'btn small', 'data-action': 'edit',
          onclick: function () { state.editing = true; state.notice = null; renderPanel('conversation'); } },
          t('conversation.edit'))));
  }

  function turnItem(turn) {
    var who = turn.sender_name || turn.sender_id || t('common.none');
    return h('article', { class: 'ep', 'data-turn': String(turn.seq) },
      h('div', { class: 'ep-meta' }, h('span', { class: 'mono' }, '#' + turn.seq), h('span', null, fmtTime(turn.at)),
        h('span', null, who)),
      h('p', { class: 'ep-content' }, h('strong', null, t('conversation.said') + ' '), turn.user_text),
      h('p', { class: 'ep-content' }, h('strong', null, t('conversation.assistant') + ' '), turn.reply_text));
  }

  function clearRecord() {
    confirmDialog({ title: t('conversation.clearTitle'), body: t('conversation.clearBody'),
      confirm: t('conversation.clear'), danger: true }).then(function (yes) {
      if (!yes) return;
      call('/conversation/clear', spaceBody()).then(function (res) {
        return done(t('conversation.cleared', { turns: res.cleared }));
      }, failed);
    });
  }

  C.defineTab('conversation', {
    load: function () { return call('/conversation', spaceBody()); },
    render: function (panel, view) {
      if (needSpace(panel)) return;
      var d = view.data, notice = state.notice, body = null;
      if (d) {
        var turns = d.record.turns || [], cfg = d.settings || {};
        body = h('div', { class: 'stack' },
          cfg.enabled ? h('p', { class: 'help' }, t('conversation.intro', { turns: cfg.max_turns, chars: cfg.max_chars,
            window: cfg.host_window })) : alertBox('warn', t('conversation.off')),
          summaryCard(d),
          h('h3', null, t('conversation.turns', { count: turns.length })),
          turns.length ? h('div', { class: 'list', id: 'conversation-turns' }, turns.slice().reverse().map(turnItem))
            : h('div', { class: 'empty' }, t('conversation.noTurns')),
          h('div', { class: 'row end' },
            h('button', { type: 'button', class: 'btn danger', id: 'conversation-clear', 'data-action': 'clear',
              disabled: !turns.length && !d.record.summary.text, onclick: clearRecord }, t('conversation.clear'))));
      }
      fill(panel, head(t('tab.conversation'), refreshBtn('conversation')),
        notice ? (notice.error ? errorBox(notice.error) : alertBox(notice.kind, notice.message)) : null,
        view.error ? errorBox(view.error) : null, view.loading && !d ? loadingBox() : null, body);
    },
    reset: function () { state = { editing: false, notice: null }; }
  });
})();
