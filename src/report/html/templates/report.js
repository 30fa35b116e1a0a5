// Deep Review report: optional filters and permalink help. The page reads the same without it.
(function () {
  "use strict";
  var form = document.getElementById("filters");
  var status = document.getElementById("filter-status");
  function checked(name) {
    var on = {};
    form.querySelectorAll("input[name=" + name + "]").forEach(function (input) {
      on[input.value] = input.checked;
    });
    return on;
  }
  function apply() {
    var severity = checked("severity");
    var agents = checked("agent");
    var hidden = 0;
    document.querySelectorAll("[data-finding-id]").forEach(function (card) {
      var keys = (card.getAttribute("data-agents") || "").split(" ");
      var show = severity[card.getAttribute("data-severity")] !== false &&
        keys.some(function (key) { return agents[key] !== false; });
      card.hidden = !show;
      if (!show) { hidden += 1; }
    });
    status.textContent = hidden ? hidden + " hidden by the filters" : "";
  }
  // A permalink to a finding inside a closed section opens the section.
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (!target) { return; }
    for (var node = target; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    target.hidden = false;
    target.scrollIntoView();
  }
  if (form && status) {
    form.hidden = false;
    form.addEventListener("change", apply);
  }
  window.addEventListener("hashchange", reveal);
  reveal();
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  });
})();
