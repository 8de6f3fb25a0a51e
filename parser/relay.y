/* parser/relay.y — placeholder grammar; the real Bison grammar replaces this. */
%require "3.8"
%define api.pure full
%define api.prefix {relay_}
%code {
int relay_lex(RELAY_STYPE *v);
void relay_error(const char *msg);
int relay_lex(RELAY_STYPE *v) { (void)v; return 0; }
void relay_error(const char *msg) { (void)msg; }
}
%token PLACEHOLDER
%%
start: %empty | PLACEHOLDER ;
%%
