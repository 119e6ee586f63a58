module github.com/pitcrew/pitcrew

go 1.26.8
