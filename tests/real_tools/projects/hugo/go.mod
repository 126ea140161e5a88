module example.com/pier-real-hugo-site

go 1.19
