/* Calls to the console's page API and their error envelopes.
   Every endpoint answers {ok: true, ...} or {ok: false, error, code}; a transport
   failure or a malformed answer becomes an ApiError too, so callers handle one shape. */
(function () {
  'use strict';
  var C = window.ltmConsole;
  var S = C.S, t = C.t;

  function ApiError(message, code) { this.message = message; this.code = code; }
  /* Endpoints whose success changes what the space list shows (a space's episodes, pending candidates,
     last change): the list is read again after them, so it never shows a count an action just changed
     until someone presses Refresh. A dry run changes nothing. */
  var CHANGES_SPACES = /^\/(candidate\/|episode\/|review\/draft\/(approve|discard)$|person\/erase$|profile\/(edit|clear)$)/;
  function changesSpaces(endpoint, body) {
    return CHANGES_SPACES.test(endpoint) && !(body && body.dry_run === true);
  }
  function call(endpoint, body) {
    return langbot.api(endpoint, body || {}, 'POST').then(function (data) {
      if (!data || typeof data !== 'object') throw new ApiError(t('common.requestFailed'), 'bad_response');
      if (data.ok === false) throw new ApiError(data.error || t('common.requestFailed'), data.code || 'error');
      if (changesSpaces(endpoint, body) && C.loadOverview) C.loadOverview();
      return data;
    }, function (err) {
      if (err instanceof ApiError) throw err;
      throw new ApiError(t('common.requestFailed'), 'transport');
    });
  }
  // The selected space, plus the endpoint's own fields.
  function spaceBody(extra) {
    var body = { space: { scope_key: S.space.scope_key, user_key: S.space.user_key } };
    if (extra) Object.keys(extra).forEach(function (k) { body[k] = extra[k]; });
    return body;
  }

  C.ApiError = ApiError; C.call = call; C.spaceBody = spaceBody;
})();
