print("benchmarks arrive with issue 07")
