// quire: passkeys. Registers one from the Account page and signs in with
// one alone from the sign-in page, through the API's /api/auth/passkeys
// endpoints (same origin, the session cookie). Loaded from /static with the
// CSP's script-src 'self'; nothing inline. Without WebAuthn the controls
// stay hidden or disabled and the pages work as before.
"use strict";

(function () {
  var supported = !!(window.PublicKeyCredential && navigator.credentials && window.fetch);

  function b64urlToBuf(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    var bin = atob(s);
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }

  function bufToB64url(buf) {
    var bytes = new Uint8Array(buf);
    var bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  // The JSON options quire answers, with their binary members decoded.
  function creationOptions(o) {
    var pk = Object.assign({}, o.publicKey);
    pk.challenge = b64urlToBuf(pk.challenge);
    pk.user = Object.assign({}, pk.user, { id: b64urlToBuf(pk.user.id) });
    pk.excludeCredentials = (pk.excludeCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: b64urlToBuf(c.id) });
    });
    return { publicKey: pk };
  }

  function requestOptions(o) {
    var pk = Object.assign({}, o.publicKey);
    pk.challenge = b64urlToBuf(pk.challenge);
    pk.allowCredentials = (pk.allowCredentials || []).map(function (c) {
      return Object.assign({}, c, { id: b64urlToBuf(c.id) });
    });
    return { publicKey: pk };
  }

  // The PublicKeyCredential in the JSON form the finish endpoints take.
  function credentialJSON(cred) {
    var r = cred.response;
    var response = { clientDataJSON: bufToB64url(r.clientDataJSON) };
    if (r.attestationObject) {
      response.attestationObject = bufToB64url(r.attestationObject);
      response.transports = r.getTransports ? r.getTransports() : [];
    }
    if (r.authenticatorData) {
      response.authenticatorData = bufToB64url(r.authenticatorData);
      response.signature = bufToB64url(r.signature);
      if (r.userHandle) response.userHandle = bufToB64url(r.userHandle);
    }
    return {
      id: cred.id,
      rawId: bufToB64url(cred.rawId),
      type: cred.type,
      authenticatorAttachment: cred.authenticatorAttachment || undefined,
      response: response,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {}
    };
  }

  function post(url, body) {
    var init = { method: "POST", credentials: "same-origin", headers: { "Accept": "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(url, init).then(function (res) {
      return res.json().catch(function () { return {}; }).then(function (data) {
        if (!res.ok) {
          var msg = data.message || "The request failed.";
          if (data.fields) {
            msg += ": " + Object.keys(data.fields).map(function (k) { return k + " " + data.fields[k]; }).join("; ");
          }
          throw new Error(msg);
        }
        return data;
      });
    });
  }

  function show(el, msg) {
    if (!el) return;
    el.textContent = msg;
    el.hidden = false;
  }

  // A WebAuthn error the user caused (cancelled, timed out) or the browser's.
  function ceremonyMessage(err) {
    if (err && err.name === "NotAllowedError") return "The passkey request was cancelled or timed out.";
    if (err && err.name === "InvalidStateError") return "This authenticator holds a passkey of your account already.";
    return (err && err.message) || "The passkey could not be used.";
  }

  document.addEventListener("DOMContentLoaded", function () {
    var login = document.querySelector("[data-passkey-login]");
    if (login && supported) {
      login.hidden = false;
      var button = document.getElementById("passkey-sign-in");
      var error = document.getElementById("passkey-login-error");
      button.addEventListener("click", function () {
        button.disabled = true;
        error.hidden = true;
        post("/api/auth/passkeys/login/begin")
          .then(function (o) { return navigator.credentials.get(requestOptions(o)); })
          .then(function (cred) { return post("/api/auth/passkeys/login/finish", { credential: credentialJSON(cred) }); })
          .then(function () {
            var next = login.getAttribute("data-next");
            window.location.assign(next && next.charAt(0) === "/" && next.charAt(1) !== "/" ? next : "/");
          })
          .catch(function (err) {
            show(error, ceremonyMessage(err));
            button.disabled = false;
          });
      });
    }

    var form = document.querySelector("form[data-passkey-register]");
    if (form && supported) {
      var add = document.getElementById("add-passkey");
      var regError = document.getElementById("passkey-register-error");
      var nojs = form.querySelector("[data-passkey-nojs]");
      if (nojs) nojs.hidden = true;
      add.disabled = false;
      form.addEventListener("submit", function (ev) {
        ev.preventDefault();
        add.disabled = true;
        regError.hidden = true;
        var name = document.getElementById("passkey-new-name").value;
        post("/api/auth/passkeys/register/begin")
          .then(function (o) { return navigator.credentials.create(creationOptions(o)); })
          .then(function (cred) {
            return post("/api/auth/passkeys/register/finish", { name: name, credential: credentialJSON(cred) });
          })
          .then(function () { window.location.assign("/account?m=passkey-added#passkeys-heading"); })
          .catch(function (err) {
            show(regError, ceremonyMessage(err));
            add.disabled = false;
          });
      });
    }
  });
})();
