module github.com/regolith/regolith

go 1.26
