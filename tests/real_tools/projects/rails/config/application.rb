# A one-controller Rails app for Pier's real-tools suite (`bin/rails server`).
require_relative "boot"
require "rails"
require "action_controller/railtie"

module PierRealRails
  class Application < Rails::Application
    config.load_defaults 6.1
    config.eager_load = false
    config.secret_key_base = "pier-real-tools-test-only"
    config.logger = Logger.new($stdout)
    config.hosts.clear
  end
end

class HelloController < ActionController::Base
  def index
    render plain: "hello from rails\n"
  end
end
