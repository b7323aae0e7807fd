module github.com/kraftwatch/kraftwatch

go 1.26
