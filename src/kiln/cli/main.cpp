// Entry point of the `kiln` command-line tool.
int main() { return 0; }
