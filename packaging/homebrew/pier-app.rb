# Pier.app, the menu-bar app, with the `pier` command line inside it. NOT RUN: no Mac here yet.
# The zips are scripts/bundle-macos.sh's, signed with a Developer ID and notarised, one per
# architecture, attached to a GitHub release. OWNER, the version and both sha256 are
# placeholders: packaging/README.md says how to fill them in.
cask "pier-app" do
  arch arm: "arm64", intel: "x86_64"

  version "0.1.0" # placeholder: the release's version
  sha256 arm:   "0000000000000000000000000000000000000000000000000000000000000000", # placeholder
         intel: "0000000000000000000000000000000000000000000000000000000000000000" # placeholder

  url "https://github.com/OWNER/pier/releases/download/v#{version}/Pier-#{version}-#{arch}.zip"
  name "Pier"
  desc "Menu-bar app that finds dev servers left running and stops them safely"
  homepage "https://github.com/OWNER/pier"

  # Pier.app asks for macOS 11 (LSMinimumSystemVersion), no newer than Homebrew itself does, so
  # no version is named here.
  depends_on :macos

  app "Pier.app"
  # The `pier` formula links a `pier` too: install one or the other. This one has the app beside
  # it, so `pier` alone starts the app.
  binary "#{appdir}/Pier.app/Contents/MacOS/pier"

  # The login item too: left behind, it would start a deleted app at every login.
  uninstall quit:      "dev.pier.Pier",
            launchctl: "dev.pier.Pier",
            delete:    "~/Library/LaunchAgents/dev.pier.Pier.plist"

  # The state and configuration folder (crates/core: store, config) and the app's preferences
  # (macOS keeps the menu-bar icon's place there).
  zap trash: [
    "~/Library/Application Support/Pier",
    "~/Library/Preferences/dev.pier.Pier.plist",
  ]
end
