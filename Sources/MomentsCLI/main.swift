print("moments: the CLI arrives with issue 06")
