// The filter above each claims table of the dashboard: verdict, kind and text; ?verdict=...&kind=...&text=... in the
// page's address preselects them (the dashboard's counts link there).
document.addEventListener("DOMContentLoaded", () => {
  for (const form of document.querySelectorAll("form.dashboard-filter")) {
    const table = document.getElementById(form.dataset.table);
    if (!table) continue;
    const rows = Array.from(table.tBodies[0].rows);
    const count = form.querySelector(".dashboard-count");
    const params = new URLSearchParams(window.location.search);
    for (const el of form.elements) {
      if (el.name && params.has(el.name)) el.value = params.get(el.name);
    }
    const apply = () => {
      const verdict = form.elements.verdict.value;
      const kind = form.elements.kind.value;
      const text = form.elements.text.value.trim().toLowerCase();
      let shown = 0;
      for (const row of rows) {
        const ok = (!verdict || row.dataset.verdict === verdict) && (!kind || row.dataset.kind === kind)
          && (!text || row.textContent.toLowerCase().includes(text));
        row.style.display = ok ? "" : "none";
        shown += ok ? 1 : 0;
      }
      count.textContent = `${shown} of ${rows.length} rows shown`;
    };
    form.addEventListener("input", apply);
    form.addEventListener("submit", (event) => event.preventDefault());
    apply();
  }
});
