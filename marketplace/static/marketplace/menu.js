// The top bar's menu on a narrow window: the Menu button shows and hides the links
// (marketplace.css folds them only once this script runs, marked by the "js" class).
document.documentElement.classList.add("js");
const toggle = document.querySelector(".menu-toggle");
const menu = document.getElementById("topbar-menu");
if (toggle && menu) {
  toggle.addEventListener("click", () => {
    const open = menu.classList.toggle("open");
    toggle.setAttribute("aria-expanded", String(open));
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.classList.contains("open")) {
      menu.classList.remove("open");
      toggle.setAttribute("aria-expanded", "false");
      toggle.focus();
    }
  });
}
