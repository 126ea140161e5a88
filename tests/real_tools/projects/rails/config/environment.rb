require_relative "application"
Rails.application.initialize!
Rails.application.routes.draw do
  root "hello#index"
end
