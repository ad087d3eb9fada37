// remit console: live refresh. While <main> carries data-refresh, the page
// is fetched again every 5 seconds and <main> is swapped for the new one.
// Nothing is swapped while a form field inside <main> has the keyboard
// focus (it would be lost), and refreshing stops when the new page's
// <main> no longer asks for it (a finished replay job).
(function () {
  "use strict";
  var PERIOD_MS = 5000;

  function busy(main) {
    var active = document.activeElement;
    return active && active !== main && main.contains(active) &&
      /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(active.tagName);
  }

  function refresh() {
    var main = document.querySelector("main[data-refresh]");
    if (!main) {
      return;
    }
    if (busy(main)) {
      window.setTimeout(refresh, PERIOD_MS);
      return;
    }
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (response.redirected || !response.ok) {
          // Signed out or refused: let the person see why.
          window.location.reload();
          return null;
        }
        return response.text();
      })
      .then(function (text) {
        if (text === null) {
          return;
        }
        var fresh = new DOMParser().parseFromString(text, "text/html").querySelector("main");
        if (fresh && !busy(main)) {
          main.innerHTML = fresh.innerHTML;
          if (!fresh.hasAttribute("data-refresh")) {
            main.removeAttribute("data-refresh");
          }
        }
        window.setTimeout(refresh, PERIOD_MS);
      })
      .catch(function () {
        window.setTimeout(refresh, PERIOD_MS);
      });
  }

  document.addEventListener("DOMContentLoaded", function () {
    window.setTimeout(refresh, PERIOD_MS);
  });
})();

// remit console: a form with data-confirm asks before it is sent; a "no"
// sends nothing. Listened for on the document, so forms swapped in by the
// refresh above ask too.
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var question = event.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  });
})();
