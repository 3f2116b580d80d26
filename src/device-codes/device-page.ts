/**
 * The minimal approval page (`/device`): sign in, enter or confirm the user code, see what the
 * device says about itself, approve or deny. Plain HTML and a small script that calls the public
 * API (no framework, no third-party origin); `client_info` is device-reported, so the script only
 * ever writes it as text (textContent), and the CSP allows no inline script at all.
 */
export const DEVICE_PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

export const DEVICE_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Connect a device</title>
<link rel="stylesheet" href="/device/device.css">
</head>
<body>
<main>
<h1>Connect a device</h1>
<p id="status" role="status"></p>
<form id="sign-in">
  <h2>1. Sign in</h2>
  <label>Membership id <input id="membership" name="membership" required autocomplete="off"></label>
  <label>Username or e-mail <input id="username" name="username" required autocomplete="username"></label>
  <label>Password <input id="password" name="password" type="password" required autocomplete="current-password"></label>
  <button type="submit">Sign in</button>
</form>
<form id="enter-code" hidden>
  <h2>2. The code shown on your device</h2>
  <label>Code <input id="user-code" name="user_code" required autocomplete="off" autocapitalize="characters"></label>
  <button type="submit">Continue</button>
</form>
<section id="decide" hidden>
  <h2>3. Allow this device to sign in as you?</h2>
  <dl id="client-info"></dl>
  <p>Code <strong id="shown-code"></strong></p>
  <button id="approve" type="button">Approve</button>
  <button id="deny" type="button">Deny</button>
</section>
</main>
<script src="/device/device.js"></script>
</body>
</html>
`;

export const DEVICE_PAGE_CSS = `body{font-family:system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:28rem;margin:3rem auto;background:#fff;padding:2rem;border-radius:.5rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.5rem;margin-top:0}h2{font-size:1.05rem}
label{display:block;margin:.6rem 0}input{display:block;width:100%;box-sizing:border-box;padding:.45rem;font-size:1rem}
button{margin-top:.6rem;margin-right:.5rem;padding:.5rem 1rem;font-size:1rem}
#status{min-height:1.2rem;font-weight:600}#status.error{color:#b00020}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
`;

export const DEVICE_PAGE_SCRIPT = `'use strict';
(function () {
  var params = new URLSearchParams(location.search);
  var accessToken = null;
  var userCode = null;
  var $ = function (id) { return document.getElementById(id); };
  function say(text, isError) {
    $('status').textContent = text;
    $('status').className = isError ? 'error' : '';
  }
  function membership() { return $('membership').value.trim(); }
  function codePath(suffix) {
    return '/memberships/' + encodeURIComponent(membership()) + '/codes/' + encodeURIComponent(userCode) + (suffix || '');
  }
  async function call(method, path, body, headers) {
    var response = await fetch(path, {
      method: method,
      headers: Object.assign(body === undefined ? {} : { 'Content-Type': 'application/json' }, headers || {}),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    var answer = await response.json().catch(function () { return {}; });
    if (!response.ok) throw new Error(answer.message || ('Request failed with status ' + response.status));
    return answer;
  }
  $('membership').value = params.get('membership_id') || '';
  $('user-code').value = params.get('user_code') || '';

  $('sign-in').addEventListener('submit', async function (event) {
    event.preventDefault();
    try {
      var tokens = await call('POST', '/generate-token',
        { username: $('username').value, password: $('password').value },
        { 'X-Service-Alias': membership() });
      accessToken = tokens.access_token;
      $('password').value = '';
      $('sign-in').hidden = true;
      $('enter-code').hidden = false;
      say('Signed in as ' + $('username').value + '.');
    } catch (error) {
      say(error.message, true);
    }
  });

  $('enter-code').addEventListener('submit', async function (event) {
    event.preventDefault();
    userCode = $('user-code').value.toUpperCase().replace(/[\\s-]+/g, '');
    try {
      var code = await call('GET', codePath(), undefined, { Authorization: 'Bearer ' + accessToken });
      var list = $('client-info');
      list.replaceChildren();
      Object.keys(code.client_info).forEach(function (key) {
        var term = document.createElement('dt');
        term.textContent = key;
        var value = document.createElement('dd');
        value.textContent = code.client_info[key];
        list.append(term, value);
      });
      $('shown-code').textContent = code.user_code;
      $('enter-code').hidden = true;
      $('decide').hidden = false;
      say('');
    } catch (error) {
      say(error.message, true);
    }
  });

  async function decide(decision) {
    try {
      await call('POST', codePath('/' + decision), undefined, { Authorization: 'Bearer ' + accessToken });
      $('decide').hidden = true;
      say(decision === 'approve' ? 'Approved. You can go back to your device.' : 'Denied. The device was not signed in.');
    } catch (error) {
      say(error.message, true);
    }
  }
  $('approve').addEventListener('click', function () { decide('approve'); });
  $('deny').addEventListener('click', function () { decide('deny'); });
})();
`;
