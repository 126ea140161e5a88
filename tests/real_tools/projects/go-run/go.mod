module example.com/pierreal

go 1.19
