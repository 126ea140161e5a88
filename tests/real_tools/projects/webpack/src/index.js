document.body.append(" (bundle loaded)");
