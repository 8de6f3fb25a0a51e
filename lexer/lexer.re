/* lexer/lexer.re — placeholder; the real re2c lexer replaces this. */
#include <stddef.h>
int relayc_lexer_placeholder(const char *s);
int relayc_lexer_placeholder(const char *s) {
  const char *YYCURSOR = s, *YYMARKER;
  (void)YYMARKER;
  /*!re2c
    re2c:define:YYCTYPE = char;
    re2c:yyfill:enable = 0;
    [a-z]+ { return 1; }
    *      { return 0; }
  */
}
