/* Review tab: the switches of both review features, then one part per feature, each with its
   own loader and renderer, loaded side by side: consolidation drafts (drafts.load / drafts.render)
   and the candidate queue (candidates.load / candidates.render). A part that fails to load shows
   its own error; the other part still renders. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t, h = C.h, fill = C.fill, fmtTime = C.fmtTime, shortId = C.shortId, said = C.said, term = C.term;
  var call = C.call, spaceBody = C.spaceBody, loadTab = C.loadTab, renderPanel = C.renderPanel;
  var alertBox = C.alertBox, errorBox = C.errorBox, loadingBox = C.loadingBox, head = C.head, refreshBtn = C.refreshBtn,
    toast = C.toast, confirmDialog = C.confirmDialog, pager = C.pager;

  function settled(promise) {
    return promise.then(function (data) { return { data: data }; }, function (err) { return { error: err }; });
  }
  function flag(key, on) {
    return h('div', { class: 'stat' }, h('div', { class: 'k' }, t(key)), h('div', { class: 'v' }, t(on ? 'review.enabled' : 'review.disabled')));
  }

  // ---------------------------------------------------------------- candidates (the candidate queue)
  var cand = { page: 1, all: false, notice: null };
  var STATUS_BADGE = { pending: 'amber', accepted: 'green', rejected: '' };

  function candidateWhat(c) {
    if (c.kind === 'profile') return t('candidates.kindProfile', { target: term('profile.target.', c.target), field: term('profile.field.', c.field) });
    return t(c.kind === 'ignore' ? 'candidates.kindIgnore' : 'candidates.kindEpisode');
  }
  function candidateCard(c) {
    var actions = [];
    if (c.status === 'pending') {
      if (c.kind !== 'ignore') actions.push(actionBtn('accept', c, 'btn small primary'));
      actions.push(actionBtn('reject', c, 'btn small'));
    }
    var props = [];
    function prop(key, value) { if (value) props.push(h('dt', null, t(key)), h('dd', null, value)); }
    prop('common.sourceRef', c.source_ref);
    prop('common.message', c.message && t('common.messageIn', { id: c.message.message_id, chat: c.message.scope_key }));
    prop('common.claimType', term('claim.', c.claim_type));
    if (c.decided_at) prop('candidates.decided', t('candidates.decidedBy', { by: c.decided_by || t('common.none'), time: fmtTime(c.decided_at) }));
    if (c.applied_type) prop('candidates.applied', term('candidate.applied.', c.applied_type) + ' ' + c.applied_id +
      (c.applied_existing ? ' · ' + t('candidates.alreadyRemembered') : ''));
    var said = c.evidence && c.evidence.trim() !== c.content;
    return h('article', { class: 'ep', 'data-candidate-id': c.id, 'data-status': c.status, 'data-kind': c.kind },
      h('p', { class: 'ep-content' }, c.content),
      said ? h('p', { class: 'muted small' }, t('candidates.said', { text: c.evidence })) : null,
      h('div', { class: 'ep-meta' },
        h('span', { class: 'badge ' + (STATUS_BADGE[c.status] || '') }, term('candidate.status.', c.status)),
        h('span', null, candidateWhat(c)),
        h('span', null, fmtTime(c.created_at)),
        c.sender_name || c.sender_id ? h('span', null, t('candidates.from', { name: C.who(c.sender_name, c.sender_id) })) : null,
        h('span', null, t('candidates.origin', { origin: term('origin.', c.origin), rule: c.rule }))),
      props.length ? h('dl', { class: 'props small' }, props) : null,
      h('div', { class: 'ep-foot' },
        h('span', { class: 'ep-id mono small', title: c.id }, c.id),
        actions.length ? h('div', { class: 'row', role: 'group', 'aria-label': t('candidates.actionsFor', { id: shortId(c.id) }) }, actions) : null));
  }
  function actionBtn(kind, c, cls) {
    return h('button', { type: 'button', class: cls, 'data-action': kind,
      onclick: function () { candidateAction(kind, c); } }, t('candidates.' + kind));
  }
  function candidateAction(kind, c) {
    var title = kind === 'accept' ? 'candidates.confirmAcceptTitle' : 'candidates.confirmRejectTitle';
    var body = kind === 'accept' ? 'candidates.confirmAccept' : 'candidates.confirmReject';
    confirmDialog({ title: t(title), body: t(body), extra: c.content.length > 160 ? c.content.slice(0, 160) + '…' : c.content,
      confirm: t('candidates.' + kind) }).then(function (yes) {
      if (!yes) return;
      var done = t(kind === 'accept' ? 'candidates.doneAccept' : 'candidates.doneReject');
      call('/candidate/' + kind, spaceBody({ candidate_id: c.id })).then(function () {
        cand.notice = { kind: 'ok', message: done };
        toast(done);
        ['audit', 'episodes', 'profiles', 'export'].forEach(function (tab) { S.views[tab] = {}; });  // changed memory
        return loadTab('review');
      }, function (err) {
        cand.notice = { kind: 'error', error: err };
        renderPanel('review');
        if (err.code === 'fenced') C.loadOverview();
      });
    });
  }

  var candidates = {
    load: function () {
      if (!S.space) return Promise.resolve(null);
      return call('/candidates', spaceBody({ page: cand.page, page_size: 10, all_statuses: cand.all }));
    },
    render: function (part) {
      var title = h('h3', null, t('candidates.title'));
      if (!S.space) return h('div', { class: 'stack' }, title, h('div', { class: 'empty' }, t('candidates.selectSpace')));
      if (part.error) return h('div', { class: 'stack' }, title, errorBox(part.error));
      var d = part.data, s = d.settings;
      var toggle = h('input', { type: 'checkbox', id: 'candidates-all', checked: cand.all, onchange: function () {
        cand.all = toggle.checked; cand.page = 1; cand.notice = null; loadTab('review');
      } });
      var notice = cand.notice;
      return h('div', { class: 'stack', id: 'candidate-queue' },
        title,
        h('p', { class: 'help' }, t('candidates.help')),
        h('div', { class: 'stats wide' },
          h('div', { class: 'stat' }, h('div', { class: 'k' }, t('candidates.countsLabel')),
            h('div', { class: 'v', id: 'candidate-counts' }, t('candidates.counts', d.counts)))),
        !s.enabled ? alertBox('warn', t('candidates.off')) : null,
        s.enabled && s.auto_apply ? alertBox('warn', t('candidates.autoApply')) : null,
        s.enabled && s.model ? h('p', { class: 'help' }, t('candidates.model')) : null,
        d.refused ? alertBox('warn', t('candidates.refused', { n: d.refused, limit: d.limit, time: fmtTime(d.last_refused_at) })) : null,
        notice ? (notice.error ? errorBox(notice.error) : alertBox(notice.kind, notice.message)) : null,
        h('label', { class: 'check' }, toggle, h('span', null, t('candidates.showAll'))),
        d.candidates.length ? h('div', { class: 'list', id: 'candidate-list' }, d.candidates.map(candidateCard))
          : h('div', { class: 'empty' }, t(cand.all ? 'candidates.emptyAll' : 'candidates.empty')),
        d.pages > 1 ? pager(d.page, d.pages, function (p) { cand.page = p; cand.notice = null; loadTab('review'); }) : null);
    }
  };

  // ------------------------------------------------------------------ consolidation drafts (K7)
  var drafts = (function () {
    // Survives reloads of the tab, forgotten when the space changes.
    var state = { notice: null, archival: null, busy: false, tag: '', model: false };

    function load() {
      if (!S.space) return Promise.resolve(null);
      return call('/review/drafts', spaceBody());
    }
    function reset() { state = { notice: null, archival: null, busy: false, tag: '', model: false }; }

    function settle(notice) {
      state.busy = false;
      state.notice = notice;
      S.views.audit = {};     // every draft action is audited
      S.views.episodes = {};  // an approval adds a record
      S.views.export = {};
      return loadTab('review');
    }
    function failed(err) {
      state.busy = false;
      state.notice = { kind: 'error', error: err };
      renderPanel('review');
      if (err.code === 'fenced') C.loadOverview();
    }
    function ask() {
      if (state.busy) return;
      state.busy = true; state.notice = null; state.archival = null;
      renderPanel('review');
      var extra = state.tag ? { tag: state.tag } : null;
      call('/review/draft/preview', spaceBody(extra)).then(function (data) {
        state.archival = { items: data.archival || [], total: data.archival_total || 0 };
        var notice;
        var note = said(data.note_said, data.note);
        if (data.draft) notice = { kind: 'ok', message: t('drafts.made', { id: shortId(data.draft.proposal_id) }) };
        else if (data.rejected) notice = { kind: 'error', error: { message: t('drafts.rejected', { note: note }) } };
        else if (state.model) notice = { kind: 'info', message: t('drafts.noDraft', { note: note }) };
        return settle(notice);
      }, failed);
    }
    function approve(d) {
      confirmDialog({ title: t('drafts.confirmApproveTitle'), body: t('drafts.confirmApprove', { n: d.sources.length }),
        extra: d.summary.length > 200 ? d.summary.slice(0, 200) + '…' : d.summary, confirm: t('drafts.approve') })
        .then(function (yes) {
          if (!yes) return;
          state.busy = true; renderPanel('review');
          call('/review/draft/approve', spaceBody({ proposal_id: d.proposal_id })).then(function (data) {
            var message = t('drafts.approved', { id: data.summary.id });
            if (data.profile_note) message += ' ' + t('drafts.profileNote', { note: said(data.profile_said, data.profile_note) });
            toast(t('drafts.approvedShort'));
            return settle({ kind: 'ok', message: message });
          }, failed);
        });
    }
    function discard(d) {
      confirmDialog({ title: t('drafts.confirmDiscardTitle'), body: t('drafts.confirmDiscard'), confirm: t('drafts.discard'),
        danger: true }).then(function (yes) {
        if (!yes) return;
        state.busy = true; renderPanel('review');
        call('/review/draft/discard', spaceBody({ proposal_id: d.proposal_id })).then(function () {
          toast(t('drafts.discarded'));
          return settle({ kind: 'ok', message: t('drafts.discarded') });
        }, failed);
      });
    }

    function sourceItem(src, number) {
      var meta = [fmtTime(src.timestamp)];
      if (src.sender_name || src.sender_id) meta.push(C.who(src.sender_name, src.sender_id));
      if (src.valid_from || src.valid_until) meta.push(t('drafts.valid', { from: fmtTime(src.valid_from), until: fmtTime(src.valid_until) }));
      return h('li', { class: 'src', 'data-source-id': src.id },
        h('p', { class: 'ep-content' }, h('strong', null, '[' + number + '] '), src.content),
        h('div', { class: 'ep-meta' }, meta.map(function (m) { return h('span', null, m); }),
          h('span', { class: 'mono', title: src.id }, src.id)));
    }
    function draftCard(d, settings) {
      var number = {}, byId = {};
      d.sources.forEach(function (s, i) { number[s.id] = i + 1; byId[s.id] = s; });
      var rows = d.statements.map(function (st, i) {
        return h('div', { class: 'cmp-row', 'data-statement': i + 1 },
          h('div', { class: 'cmp-stmt' }, h('div', { class: 'muted small' }, t('drafts.statement', { n: i + 1 })),
            h('p', { class: 'ep-content' }, st.text)),
          h('ol', { class: 'cmp-srcs', 'aria-label': t('drafts.sourcesOf', { n: i + 1 }) },
            st.sources.map(function (id) { return sourceItem(byId[id] || { id: id, content: '' }, number[id] || '?'); })));
      });
      var updates = (d.profile_updates || []).map(function (u) {
        return h('li', null, t('drafts.profileUpdate', { field: u.field, value: u.value }) + ' [' +
          u.sources.map(function (id) { return number[id] || '?'; }).join(', ') + ']');
      });
      return h('article', { class: 'ep draft', 'data-proposal-id': d.proposal_id },
        h('div', { class: 'panel-head', style: 'margin-bottom:6px' },
          h('h4', null, t('drafts.draft', { id: shortId(d.proposal_id) })),
          h('span', { class: 'muted small' }, t('drafts.meta', { time: fmtTime(d.created_at), n: d.sources.length }))),
        h('div', { class: 'cmp-head', 'aria-hidden': 'true' }, h('span', null, t('drafts.summaryCol')), h('span', null, t('drafts.sourcesCol'))),
        h('div', { class: 'cmp' }, rows),
        d.valid_from || d.valid_until ? h('p', { class: 'small muted' }, t('drafts.sharedValidity', { from: fmtTime(d.valid_from), until: fmtTime(d.valid_until) })) : null,
        updates.length ? h('ul', { class: 'small' }, updates) : null,
        h('div', { class: 'ep-foot' },
          h('span', { class: 'ep-id mono small', title: d.proposal_id }, d.proposal_id),
          h('div', { class: 'row', role: 'group', 'aria-label': t('drafts.actionsFor', { id: shortId(d.proposal_id) }) },
            h('button', { type: 'button', class: 'btn small primary', 'data-action': 'approve', disabled: state.busy || !settings.enabled,
              onclick: function () { approve(d); } }, t('drafts.approve')),
            h('button', { type: 'button', class: 'btn small danger', 'data-action': 'discard', disabled: state.busy,
              onclick: function () { discard(d); } }, t('drafts.discard')))));
    }
    function archivalList() {
      var a = state.archival;
      if (!a) return null;
      if (!a.items.length) return h('p', { class: 'small muted', id: 'drafts-archival' }, t('drafts.archivalNone'));
      return h('div', { class: 'stack', id: 'drafts-archival' },
        h('h4', null, t('drafts.archivalTitle', { n: a.items.length, total: a.total })),
        h('ul', { class: 'list' }, a.items.map(function (c) {
          return h('li', { class: 'ep' }, h('p', { class: 'ep-content' }, c.episode.content),
            h('div', { class: 'ep-meta' }, h('span', { class: 'mono' }, c.episode.id)),
            c.notes.map(function (n) { return h('p', { class: 'small' }, t('drafts.risk', { note: said(n, n.english) })); }));
        })));
    }

    function render(data) {
      var parts = [h('h3', null, t('drafts.title')), h('p', { class: 'small muted' }, t('drafts.intro'))];
      if (!S.space) return h('section', { class: 'stack', id: 'review-drafts' }, parts, h('div', { class: 'empty' }, t('drafts.selectSpace')));
      if (!data) return h('section', { class: 'stack', id: 'review-drafts' }, parts);
      var settings = data.settings, list = data.drafts || [], notice = state.notice;
      state.model = settings.model;
      var tagInput = h('input', { type: 'text', id: 'draft-tag', maxlength: '40', placeholder: t('drafts.tagPh'),
        'aria-label': t('drafts.tag'), oninput: function (e) { state.tag = e.target.value.trim(); } });
      tagInput.value = state.tag;
      parts.push(
        !settings.model ? alertBox('info', t('drafts.noModel')) : null,
        settings.model && !settings.enabled ? alertBox('warn', t('drafts.disabled')) : null,
        notice ? (notice.error ? errorBox(notice.error) : alertBox(notice.kind, notice.message)) : null,
        h('div', { class: 'toolbar' },
          settings.model ? h('label', { class: 'field status-field' }, h('span', null, t('drafts.tag')), tagInput) : null,
          h('button', { type: 'button', class: 'btn primary', id: 'draft-preview', disabled: state.busy, onclick: ask },
            state.busy ? t(settings.model ? 'drafts.working' : 'app.loading')
              : t(settings.model ? 'drafts.preview' : 'drafts.previewArchival'))),
        list.length ? h('p', { class: 'small' }, t('drafts.check')) : null,
        list.length ? h('div', { class: 'list', id: 'draft-list' }, list.map(function (d) { return draftCard(d, settings); }))
          : h('div', { class: 'empty', id: 'draft-empty' }, t('drafts.empty')),
        archivalList());
      return h('section', { class: 'stack', id: 'review-drafts' }, parts);
    }

    return { load: load, render: render, reset: reset };
  })();

  // ------------------------------------------------------------------ the tab
  C.defineTab('review', {
    needsSpace: false,
    load: function () {
      return Promise.all([settled(call('/review', S.space ? spaceBody() : {})), settled(drafts.load()),
        settled(candidates.load())]).then(function (parts) {
        return { review: parts[0], drafts: parts[1], candidates: parts[2] };
      });
    },
    reset: function () { drafts.reset(); cand = { page: 1, all: cand.all, notice: null }; },
    render: function (panel, view) {
      var d = view.data, r = d && d.review && d.review.data;
      fill(panel,
        head(t('review.title'), refreshBtn('review')),
        view.error ? errorBox(view.error) : null,
        view.loading && !d ? loadingBox() : null,
        d && d.review.error ? errorBox(d.review.error) : null,
        r ? h('div', { class: 'stats wide', id: 'review-switches' }, flag('review.consolidation', r.settings.consolidation_enabled),
          flag('review.candidates', r.settings.candidate_extraction_enabled)) : null,
        r ? h('p', { class: 'help small' }, t('review.settingsNote')) : null,
        d ? h('div', { class: 'stack' },
          d.drafts.error ? h('section', { id: 'review-drafts' }, errorBox(d.drafts.error)) : drafts.render(d.drafts.data),
          h('section', { id: 'review-candidates' }, candidates.render(d.candidates))) : null);
    }
  });
})();
