# The `pier` command line, built from source. NOT RUN: no Mac and no Homebrew here yet.
# OWNER (the GitHub owner of the repository) and the sha256 are placeholders: packaging/README.md
# says how to fill them in on the day of the first release, and how to try this before one.
class Pier < Formula
  desc "Find and safely stop dev servers left running after their terminal is gone"
  homepage "https://github.com/OWNER/pier"
  url "https://github.com/OWNER/pier/archive/refs/tags/v0.1.0.tar.gz"
  sha256 "0000000000000000000000000000000000000000000000000000000000000000" # placeholder
  license "MIT"
  head "https://github.com/OWNER/pier.git", branch: "main"

  depends_on "rust" => :build

  def install
    # libproc's build script reads <libproc.h> from $SDKROOT, else from the Command Line Tools.
    ENV["SDKROOT"] = MacOS.sdk_path if OS.mac?
    # The root package is the CLI alone: no GUI library (the menu-bar app is the pier-app cask).
    system "cargo", "install", *std_cargo_args(path: ".")
    generate_completions_from_executable(bin/"pier", "completions")
    system bin/"pier", "man", "--dir", man1
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/pier --version")
    # The self-test against a test process of Pier's own: what a scan reads and how a stop
    # signals; exit 1 (a failed test here) when something a stop needs does not work.
    ENV["PIER_STATE_DIR"] = (testpath/"state").to_s
    report = JSON.parse(shell_output("#{bin}/pier doctor --json"))
    assert report["ready"]
  end
end
