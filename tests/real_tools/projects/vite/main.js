document.querySelector("h1").textContent += " (module loaded)";
